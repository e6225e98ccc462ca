/**
 * The conversation memory a model is given: the recent turns of this conversation, newest kept, within
 * MAX_PROMPT_HISTORY_TURNS messages and MAX_PROMPT_HISTORY_CHARS characters (docs/architecture.md, "Conversation
 * memory"). On the phone the session's history already holds only what the caller heard of each reply.
 */
import { MAX_PROMPT_HISTORY_CHARS, MAX_PROMPT_HISTORY_TURNS } from './limits.ts';
import type { ConversationTurn } from './types.ts';

/**
 * The newest messages of `history` (oldest first, as given) that fit the budget. Empty ones (a reply the caller did
 * not hear at all) are left out. Messages are dropped whole, oldest first; a reply whose question was dropped goes
 * too, so the memory never starts with an answer to nothing.
 */
export function promptHistory(
  history: readonly ConversationTurn[],
  budget: { turns: number; chars: number } = { turns: MAX_PROMPT_HISTORY_TURNS, chars: MAX_PROMPT_HISTORY_CHARS },
): ConversationTurn[] {
  const kept: ConversationTurn[] = [];
  let chars = 0;
  for (let i = history.length - 1; i >= 0 && kept.length < budget.turns; i--) {
    const turn = history[i]!;
    if (turn.text.trim() === '') continue;
    const size = codePoints(turn.text);
    if (chars + size > budget.chars) break;
    chars += size;
    kept.push(turn);
  }
  kept.reverse();
  while (kept[0]?.role === 'assistant') kept.shift();
  return kept;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
