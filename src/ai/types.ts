/**
 * The AI port: one interface, two adapters (the embedded extractive answerer and an OpenAI-compatible API). The
 * session machine drives the tool rounds: it asks for a step, runs the calls the step asks for, and asks again with
 * their results; after the last allowed round it offers no tools, so the AI must answer.
 */
import type { Channel } from '../channels-and-handoffs.ts';
import type { ToolInvocation, ToolOutcome, ToolSpec } from '../botlink/tools-types.ts';
import type { KnowledgePassage } from '../knowledge/types.ts';
import type { AiErrorReason } from './ai-error.ts';

export interface ConversationTurn {
  role: 'customer' | 'assistant';
  text: string;
}

export interface AiStepInput {
  channel: Channel;
  /** Two-letter language code. */
  language: string;
  /** What the customer just said or wrote. */
  message: string;
  /** Earlier turns of this conversation, oldest first (already cut to what was really said on the phone). */
  history: ConversationTurn[];
  /** Knowledge-base passages for this message, best first. */
  passages: KnowledgePassage[];
  /** protocol §1.3: with handled false the integrator's reply is extra context only. */
  integratorContext: string | null;
  /** Tools offered in this step; empty when there are none or the rounds are used up (protocol §8: three rounds). */
  tools: ToolSpec[];
  /** Calls made earlier in this turn and their outcomes, round by round. */
  rounds: { calls: ToolInvocation[]; outcomes: ToolOutcome[] }[];
  signal?: AbortSignal;
  /** The workspace's (company's) name, for the LLM's system prompt; absent: "this company". */
  workspaceName?: string;
  /**
   * Streaming (the phone): an adapter that can stream calls this with each complete sentence of the answer as soon as
   * the model has written it (./sentence-stream.ts), in order. The step's answer still holds the whole text; its
   * `streamed` says how much of it went out this way. Adapters that cannot stream ignore it.
   */
  onText?: (piece: string) => void;
}

/**
 * source: 'knowledge_base' when the answer is built from passages, 'ai' when a language model wrote it, 'fallback'
 * when nothing fitted and the customer is offered the team.
 */
export type AiStep =
  | {
      kind: 'answer';
      text: string;
      source: 'ai' | 'knowledge_base' | 'fallback';
      /** Streaming: how many leading characters of `text` already went out through `onText`. */
      streamed?: number;
      /** The stream broke off after some of it was spoken; `text` is what was spoken (the reason, for the turn's errors). */
      cut?: AiErrorReason;
    }
  | {
      kind: 'tool_calls';
      calls: ToolInvocation[];
      /** Streaming: what the model said (and went out through `onText`) before it called the tools. */
      said?: string;
    };

export interface AiPort {
  readonly name: 'embedded' | 'openai';
  step(input: AiStepInput): Promise<AiStep>;
}
