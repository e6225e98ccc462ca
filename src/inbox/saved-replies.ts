/**
 * Saved replies (docs/interfaces.md, "The team's tools"; docs/architecture.md, "Who handles a conversation"): the
 * team's answers to what customers often ask, typed after `/` in the reply box. Every role reads and adds them; an
 * agent changes and deletes the ones they wrote, owners and admins any (a small team shares its replies, and the one
 * who wrote a reply keeps it right). Placeholders are filled when a reply is inserted: the dashboard fills them in
 * the reply box (src/dashboard/inbox-reply-tools.js, by the same rules as {@link fillPlaceholders}).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import type { SavedRepliesRepository, SavedReply } from '../../db/repositories/saved-replies.repository.ts';
import { AppError, notFound } from '../errors.ts';
import { MAX_SAVED_REPLIES, MAX_SAVED_REPLY_CHARS, MAX_SHORTCUT_CHARS } from './limits.ts';

/** The placeholders a saved reply may hold, written `{{customer.name}}` (spaces inside the braces allowed). */
export const PLACEHOLDERS = ['customer.name', 'customer.email', 'agent.name'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** `{{ name }}`: what counts as a placeholder; anything else in double braces is an unknown one. */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const SHORTCUT = new RegExp(`^[\\p{L}\\p{N}_-]{1,${MAX_SHORTCUT_CHARS}}$`, 'u');

export interface SavedReplyView {
  id: string;
  shortcut: string;
  text: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * A saved reply's text with its placeholders filled: a value nobody knows (a visitor who gave no name) leaves nothing,
 * and the space or comma it leaves behind is tidied ("Hi {{customer.name}}, …" becomes "Hi, …").
 */
export function fillPlaceholders(text: string, values: Partial<Record<Placeholder, string | null | undefined>>): string {
  const filled = text.replace(PLACEHOLDER, (_, name: string) => (PLACEHOLDERS as readonly string[]).includes(name) ? (values[name as Placeholder] ?? '').trim() : `{{${name}}}`);
  return filled.replace(/[ \t]+([,.!?;:])/g, '$1').replace(/[ \t]{2,}/g, ' ').trim();
}

/** The placeholders a text names that are not {@link PLACEHOLDERS}. */
export function unknownPlaceholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !(PLACEHOLDERS as readonly string[]).includes(name));
}

function view(row: SavedReply): SavedReplyView {
  return {
    id: row.id,
    shortcut: row.shortcut,
    text: row.text,
    created_by: row.created_by,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

const unprocessable = (field: string, message: string, sentence: string) => new AppError('unprocessable', sentence, [{ field, message }]);

/** A saved reply as written: its shortcut without a leading `/`, and its text, checked (422 naming the field). */
export function checkSavedReply(input: { shortcut: string; text: string }): { shortcut: string; text: string } {
  const shortcut = input.shortcut.trim().replace(/^\//, '');
  if (!SHORTCUT.test(shortcut)) {
    throw unprocessable('shortcut', `must be 1 to ${MAX_SHORTCUT_CHARS} letters, digits, - and _, without spaces`, `The shortcut is typed after / in the reply box: 1 to ${MAX_SHORTCUT_CHARS} letters, digits, - and _, without spaces.`);
  }
  const text = input.text.trim();
  if (text === '') throw unprocessable('text', 'must not be empty', 'The reply is empty.');
  if (Array.from(text).length > MAX_SAVED_REPLY_CHARS) {
    throw unprocessable('text', `must be at most ${MAX_SAVED_REPLY_CHARS} characters`, `The reply is longer than ${MAX_SAVED_REPLY_CHARS} characters, the most a web chat message holds.`);
  }
  const unknown = unknownPlaceholders(text);
  if (unknown.length > 0) {
    throw unprocessable('text', `names {{${unknown[0]}}}, which is no placeholder we fill`, `{{${unknown[0]}}} is not a placeholder we can fill; use ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}.`);
  }
  return { shortcut, text };
}

export function createSavedReplies(deps: { repo: SavedRepliesRepository; now?: () => number }) {
  const { repo } = deps;
  const now = deps.now ?? Date.now;

  const taken = (shortcut: string) => new AppError('conflict', `Your team already has a saved reply with the shortcut /${shortcut}.`, [{ field: 'shortcut', message: 'is already used by another saved reply' }]);

  /** An agent changes only what they wrote; owners and admins change any. */
  async function mayChange(principal: Principal, id: string): Promise<SavedReply> {
    const row = await repo.find(principal.workspaceId, id);
    if (!row) throw notFound('The saved reply');
    if (principal.role === 'agent' && row.created_by !== principal.userId) {
      throw new AppError('forbidden', 'An agent changes only the saved replies they wrote; ask an owner or admin to change this one.');
    }
    return row;
  }

  return {
    async list(workspaceId: string): Promise<SavedReplyView[]> {
      return (await repo.list(workspaceId, MAX_SAVED_REPLIES)).map(view);
    },

    async add(principal: Principal, input: { shortcut: string; text: string }): Promise<SavedReplyView> {
      const reply = checkSavedReply(input);
      if ((await repo.count(principal.workspaceId)) >= MAX_SAVED_REPLIES) {
        throw unprocessable('shortcut', `would be one more than the ${MAX_SAVED_REPLIES} saved replies a workspace keeps`, `Your team has ${MAX_SAVED_REPLIES} saved replies, the most a workspace keeps: delete one first.`);
      }
      const added = await repo.add({ id: randomUUID(), workspace_id: principal.workspaceId, created_by: principal.userId, ...reply });
      if (added === 'taken') throw taken(reply.shortcut);
      return view(added);
    },

    async update(principal: Principal, id: string, input: { shortcut: string; text: string }): Promise<SavedReplyView> {
      const reply = checkSavedReply(input);
      await mayChange(principal, id);
      const changed = await repo.update(principal.workspaceId, id, reply, new Date(now()));
      if (changed === 'taken') throw taken(reply.shortcut);
      if (!changed) throw notFound('The saved reply');
      return view(changed);
    },

    async remove(principal: Principal, id: string): Promise<void> {
      await mayChange(principal, id);
      if (!(await repo.remove(principal.workspaceId, id))) throw notFound('The saved reply');
    },
  };
}

export type SavedReplies = ReturnType<typeof createSavedReplies>;
