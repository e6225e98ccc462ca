/**
 * The satisfaction question on WhatsApp (docs/whatsapp.md, "The satisfaction question"). When a colleague closes a
 * conversation and the customer's last message is inside Meta's 24-hour window, one interactive message asks it with
 * three reply buttons in the customer's language ("Good", "OK", "Bad": scores 5, 3 and 1). It is a bot message of the
 * session with an outgoing row of kind `survey`, queued like every message of ours, so whichever engine claims it sends
 * it, once. The customer's tap comes back as an `interactive` message whose `button_reply.id` names the session and
 * the score: kept as the session's answer (`session_satisfaction`, as web chat's), never a turn, never answered.
 */
import { randomUUID } from 'node:crypto';
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import type { VisitorRepository } from '../../../db/repositories/visitor.repository.ts';
import type { WhatsappRepository } from '../../../db/repositories/whatsapp.repository.ts';
import { phrase, type PhraseKey } from '../../ai/phrases.ts';
import { isUuid } from '../../ids.ts';
import { WHATSAPP_WINDOW_MS } from '../../inbox/limits.ts';
import type { Logger } from '../../log.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import type { ReplyButton } from './graph-client.ts';

/** The buttons, best first, and the score each gives (WhatsApp allows three of 20 characters: src/ai/phrases.ts). */
const SURVEY_BUTTONS: readonly { key: PhraseKey; score: number }[] = [
  { key: 'survey_good', score: 5 },
  { key: 'survey_ok', score: 3 },
  { key: 'survey_bad', score: 1 },
];
const REPLY_ID_PREFIX = 'satisfaction';

/** The reply buttons of a session's question: `satisfaction:<session id>:<score>`, titled in `language`. */
export function surveyButtons(sessionId: string, language: string): ReplyButton[] {
  return SURVEY_BUTTONS.map((b) => ({ id: `${REPLY_ID_PREFIX}:${sessionId}:${b.score}`, title: phrase(b.key, language) }));
}

/** A button id of ours read back: the session and the score; null for any other id. */
export function readSurveyReply(replyId: string): { sessionId: string; score: number } | null {
  const [prefix, sessionId, score, ...rest] = replyId.split(':');
  if (prefix !== REPLY_ID_PREFIX || sessionId === undefined || !isUuid(sessionId) || rest.length > 0) return null;
  const found = SURVEY_BUTTONS.find((b) => String(b.score) === score);
  return found ? { sessionId, score: found.score } : null;
}

/** What puts the question: the session's message and outgoing row, the question marked put, the worker woken. */
export interface SatisfactionQuestionDeps {
  sessions: Pick<SessionsRepository, 'addWhatsappMessage'>;
  /** The satisfaction table, as web chat's question uses it (db/repositories/visitor.repository.ts). */
  answers: Pick<VisitorRepository, 'ask'>;
  /** The question is shown on the session's live stream as the bot's message. */
  runtime: Pick<SessionRuntime, 'notify'>;
  /** Wakes the WhatsApp worker's sends (absent: its poll finds the question). */
  wake?: () => void;
  logger: Logger;
  now?: () => number;
}

/** What reads a tap: the question's session, and the satisfaction table the answer is kept in. */
export interface SatisfactionTapsDeps {
  repository: Pick<WhatsappRepository, 'surveySession'>;
  answers: Pick<VisitorRepository, 'answer'>;
  logger: Logger;
  now?: () => number;
}

/** What a tap on a reply button was: the session it belongs to, and whether it is now its answer. */
export interface SurveyTap {
  /** The conversation's session_id (the tap is stored with it); the customer's current one is not touched. */
  sessionExternalId: string;
  /** False: the question was answered before (a second tap), or was never put. */
  recorded: boolean;
}

/**
 * The question, put when a colleague closes the conversation. Apart from the taps (below) because it wakes the WhatsApp
 * worker, and the worker reads the taps: each half is built on the side of the worker it needs.
 */
export function createSatisfactionQuestion(deps: SatisfactionQuestionDeps) {
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ component: 'whatsapp-satisfaction' });

  return {
    /**
     * A colleague closed the conversation: the question with its reply buttons is queued, in the conversation's
     * language, and put (`session_satisfaction.asked_at`). Outside the 24-hour window nothing is queued and no question
     * is put; false then.
     */
    async ask(row: { id: string; workspace_id: string; external_id: string; language?: string | null }): Promise<boolean> {
      const language = row.language ?? 'en';
      const id = randomUUID();
      const at = new Date(now()).toISOString();
      const text = phrase('survey_question', language);
      const stored = await deps.sessions.addWhatsappMessage(
        { id, session_id: row.id, from: 'bot', text, source: null, agent_user_id: null, turn_id: null, outbound_id: randomUUID(), at },
        { workspaceId: row.workspace_id, externalId: row.external_id, kind: 'survey', windowStart: new Date(now() - WHATSAPP_WINDOW_MS), buttons: surveyButtons(row.id, language) },
      );
      if (!stored) {
        log.debug({ sessionId: row.id }, "no satisfaction question: the customer's last message is outside the 24-hour window");
        return false;
      }
      // Put before the worker is woken (a tap needs the message on the customer's phone first).
      await deps.answers.ask({ sessionId: row.id, workspaceId: row.workspace_id, channel: 'whatsapp', at: new Date(at) });
      deps.wake?.();
      deps.runtime.notify({ type: 'message', sessionId: row.id, message: { id, from: 'bot', text, at, agent: null, status: 'queued' } });
      return true;
    },
  };
}

/** The customer's taps on the question's buttons, as the WhatsApp worker's answer stage reads them. */
export function createSatisfactionTaps(deps: SatisfactionTapsDeps) {
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ component: 'whatsapp-satisfaction' });

  return {
    /**
     * A customer tapped a reply button. A button of the question this customer was sent is the session's answer, once;
     * any other (another app's, a made-up id, another customer's question) belongs to no session: null.
     */
    async tapped(tap: { workspaceId: string; waId: string; replyId: string }): Promise<SurveyTap | null> {
      const reply = readSurveyReply(tap.replyId);
      if (!reply) return null;
      const session = await deps.repository.surveySession({ workspaceId: tap.workspaceId, waId: tap.waId, sessionId: reply.sessionId, replyId: tap.replyId });
      if (!session) return null;
      const outcome = await deps.answers.answer(session.id, reply.score, null, new Date(now()));
      log.debug({ sessionId: session.id, workspaceId: tap.workspaceId, outcome }, 'satisfaction tapped on WhatsApp');
      return { sessionExternalId: session.external_id, recorded: outcome === 'answered' };
    },
  };
}

export type SatisfactionQuestion = ReturnType<typeof createSatisfactionQuestion>;
export type SatisfactionTaps = ReturnType<typeof createSatisfactionTaps>;
