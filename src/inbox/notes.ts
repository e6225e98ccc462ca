/**
 * Private notes (docs/interfaces.md, "The team's tools"; docs/architecture.md, "Who handles a conversation"): what the
 * team writes on a conversation for itself. A note is stored apart from the conversation's messages (migration 0031),
 * shown on the team's session stream and in GET /v1/sessions/{id} among the messages with `from: "note"`, and never
 * reaches the customer: the widget's long poll, WhatsApp's sends, exports and the integrator read the messages only.
 * `@name` names a colleague (their name as the team sees it, whole or its first word, or their email before the @,
 * whatever the capitals):
 * they get a notification, and their open dashboard hears it at once on the live bus, on whichever engine it is.
 * Its author edits its text (a colleague an edit newly mentions is told, once per note) and deletes it; an owner
 * deletes any note.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import type { SessionNote, SessionNotesRepository } from '../../db/repositories/session-notes.repository.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { displayName, type NamedUser } from '../accounts/display-name.ts';
import { AppError, forbidden, notFound } from '../errors.ts';
import type { LiveBus } from '../events/live-bus.ts';
import type { SessionRuntime } from '../sessions/session-runtime.ts';
import { MAX_MENTIONS_PER_NOTE, MAX_NOTE_CHARS, MAX_NOTES_SHOWN } from './limits.ts';

/** How much of a note a notification quotes, in characters. */
const QUOTED_CHARS = 140;
/** `@name` after a space, a line's start or punctuation (not an email address's @). */
const MENTION = /(?<![\p{L}\p{N}_.+-])@([\p{L}\p{N}][\p{L}\p{N}._+-]*)/gu;

export interface NoteView {
  id: string;
  from: 'note';
  text: string;
  at: string;
  author: { user_id: string | null; name: string };
  mentions: { user_id: string; name: string }[];
  /** When its author last changed it; null: never. */
  edited_at: string | null;
}

/** What a mentioned colleague's dashboard hears (GET /v1/inbox/events, event `mention`). */
export interface MentionEvent {
  note_id: string;
  session_id: string;
  by: { user_id: string; name: string };
  text: string;
  at: string;
}

export interface NotesDeps {
  repo: SessionNotesRepository;
  sessions: Pick<SessionsRepository, 'findById'>;
  runtime: Pick<SessionRuntime, 'notify'>;
  live: Pick<LiveBus, 'publish' | 'subscribe'>;
  now?: () => number;
}

/**
 * The colleagues a note's `@name`s name, whatever the capitals, not the author: by their name as the team sees it
 * (src/accounts/display-name.ts), whole ("@Sam Jansen", up to a character that is no letter or digit) or its first
 * word ("@Sam"), or by their email before the @ ("@sam.jansen").
 */
export function mentionedIn(text: string, colleagues: readonly ({ id: string } & NamedUser)[], authorId: string): { user_id: string; name: string }[] {
  const mentions = [...text.matchAll(MENTION)];
  const words = new Set(mentions.map((m) => m[1]!.replace(/[._+-]+$/, '').toLowerCase()));
  // What follows each @, for names of several words.
  const following = mentions.map((m) => text.slice(m.index + 1).toLowerCase());
  const found: { user_id: string; name: string }[] = [];
  for (const c of colleagues) {
    if (c.id === authorId) continue;
    const local = c.email.split('@', 1)[0]!.toLowerCase();
    const name = displayName(c);
    const whole = name.toLowerCase();
    const first = whole.split(' ', 1)[0]!;
    const named = following.some((rest) => rest.startsWith(whole) && !/^[\p{L}\p{N}]/u.test(rest.slice(whole.length)));
    if (named || words.has(local) || words.has(first)) found.push({ user_id: c.id, name });
  }
  return found.slice(0, MAX_MENTIONS_PER_NOTE);
}

export function noteView(row: SessionNote): NoteView {
  return {
    id: row.id,
    from: 'note',
    text: row.text,
    at: new Date(row.at).toISOString(),
    author: { user_id: row.author_user_id, name: row.author_name },
    mentions: Array.isArray(row.mentions) ? (row.mentions as NoteView['mentions']) : (JSON.parse(String(row.mentions)) as NoteView['mentions']),
    edited_at: row.edited_at === null ? null : new Date(row.edited_at).toISOString(),
  };
}

/** A note's text as written: trimmed, not empty, at most MAX_NOTE_CHARS (422 otherwise), on writing and on editing. */
function noteText(text: string): string {
  const body = text.trim();
  if (body === '') throw new AppError('unprocessable', 'The note is empty.', [{ field: 'text', message: 'must not be empty' }]);
  if (Array.from(body).length > MAX_NOTE_CHARS) {
    throw new AppError('unprocessable', `The note is longer than ${MAX_NOTE_CHARS} characters.`, [{ field: 'text', message: `at most ${MAX_NOTE_CHARS} characters` }]);
  }
  return body;
}

function clip(text: string): string {
  const chars = Array.from(text.replace(/\s+/g, ' '));
  return chars.length > QUOTED_CHARS ? `${chars.slice(0, QUOTED_CHARS).join('')}…` : chars.join('');
}

/** A session's notes, oldest first, for GET /v1/sessions/{id}. */
export function notesOf(repo: Pick<SessionNotesRepository, 'forSession'>): (sessionId: string) => Promise<NoteView[]> {
  return async (sessionId) => (await repo.forSession(sessionId, MAX_NOTES_SHOWN)).map(noteView);
}

export function createNotes(deps: NotesDeps) {
  const { repo } = deps;
  const now = deps.now ?? Date.now;

  /** The colleagues told of a note now hear it on their open dashboards, on whichever engine (GET /v1/inbox/events). */
  function tellMentioned(note: NoteView, sessionId: string, userIds: readonly string[]): void {
    if (note.author.user_id === null) return;
    const by = { user_id: note.author.user_id, name: note.author.name };
    for (const userId of userIds) {
      const event: MentionEvent = { note_id: note.id, session_id: sessionId, by, text: clip(note.text), at: note.edited_at ?? note.at };
      deps.live.publish('team', userId, event);
    }
  }

  return {
    /** POST /v1/sessions/{id}/notes: every role, on every channel. */
    async add(principal: Principal, sessionId: string, text: string): Promise<{ note: NoteView }> {
      const session = await deps.sessions.findById(principal.workspaceId, sessionId);
      if (!session) throw notFound('The session');
      const body = noteText(text);
      const author = { user_id: principal.userId, name: displayName(principal) };
      const mentions = mentionedIn(body, await repo.colleagues(principal.workspaceId), principal.userId);
      const at = new Date(now());
      const id = randomUUID();
      const quoted = clip(body);
      await repo.add(
        { id, workspace_id: principal.workspaceId, session_id: session.id, author_user_id: author.user_id, author_name: author.name, text: body, mentions, at },
        mentions.map((m) => ({ id: randomUUID(), user_id: m.user_id, message: `${author.name} mentioned you in a note: ${quoted}` })),
      );
      const note: NoteView = { id, from: 'note', text: body, at: at.toISOString(), author, mentions, edited_at: null };
      // The team's stream of this conversation (dashboards only; the widget reads stored messages, never this).
      deps.runtime.notify({ type: 'note', sessionId: session.id, note });
      tellMentioned(note, session.id, mentions.map((m) => m.user_id));
      return { note };
    },

    /**
     * PATCH /v1/sessions/{id}/notes/{note_id}: its author only (403 for anyone else's, whatever their role). A
     * colleague the new text mentions who was not told of this note before is told now; nobody is told twice.
     */
    async edit(principal: Principal, sessionId: string, noteId: string, text: string): Promise<{ note: NoteView }> {
      const row = await repo.find(principal.workspaceId, sessionId, noteId);
      if (!row) throw notFound('The note');
      if (row.author_user_id !== principal.userId) throw forbidden('Only its author may change a note.');
      const body = noteText(text);
      const mentions = mentionedIn(body, await repo.colleagues(principal.workspaceId), principal.userId);
      const quoted = clip(body);
      const edited = await repo.edit(
        row,
        { text: body, mentions, at: new Date(now()) },
        mentions.map((m) => ({ id: randomUUID(), user_id: m.user_id, message: `${row.author_name} mentioned you in a note: ${quoted}` })),
      );
      if (!edited) throw notFound('The note');
      const note = noteView(edited.note);
      deps.runtime.notify({ type: 'note', sessionId: row.session_id, note });
      tellMentioned(note, row.session_id, edited.notified);
      return { note };
    },

    /** DELETE /v1/sessions/{id}/notes/{note_id}: its author, or an owner (403 for anyone else). */
    async remove(principal: Principal, sessionId: string, noteId: string): Promise<void> {
      const row = await repo.find(principal.workspaceId, sessionId, noteId);
      if (!row) throw notFound('The note');
      if (row.author_user_id !== principal.userId && principal.role !== 'owner') throw forbidden('Only its author or an owner may delete a note.');
      if (!(await repo.remove(row.id))) throw notFound('The note');
      deps.runtime.notify({ type: 'note_deleted', sessionId: row.session_id, note_id: row.id });
    },

    /** The @mentions of one user, from every engine; returns what stops listening. */
    subscribeMentions(userId: string, listener: (event: MentionEvent) => void): () => void {
      return deps.live.subscribe('team', userId, (event) => listener(event as MentionEvent));
    },
  };
}

export type Notes = ReturnType<typeof createNotes>;
