/**
 * Plays a scenario run (docs/scenarios.md, "How a run plays"): `runs` test conversations, one after the other, each a
 * new conversation whose turns go through the real engine on the scenario's channel, then each turn's expectations
 * checked against what came back and what the turn's record says (its source, handoff and tool calls).
 *
 * - Web chat: the web chat service's own turn (the language told as for a visitor), without a conversation row,
 *   visitor token or webhook (src/channels/webchat/webchat-service.ts, `testTurn`).
 * - WhatsApp: the WhatsApp worker's turn up to the reply as it would be sent (src/channels/whatsapp/answer-stage.ts,
 *   `whatsappTurn`); the reply is kept here instead of going to the Graph API.
 * - Phone: the session's turn as a call runs it (the Bot Link's 3.5 s race with the knowledge base and the tools, the
 *   reply in its spoken form), without the telephony bridge: no WebSocket, filler, barge-in or transfer.
 *
 * A scenario with a `persona` goes on after its scripted turns with a simulated customer (./simulated-customer.ts):
 * the workspace's model writes each next message, which is said on the channel exactly as a scripted one, until the
 * customer says the goal is reached or given up, its messages run out (`max_turns`), or the play's deadline passes.
 *
 * A scenario with a `judge` is then judged, play by play, by the workspace's model (./judge.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ToolRound } from '../../machines/session-types.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import type { RunResult } from '../../db/repositories/scenarios.repository.ts';
import { whatsappTurn } from '../channels/whatsapp/answer-stage.ts';
import { errorText } from '../errors.ts';
import type { Credentials, SessionRuntime, TestConversation, TurnResult } from '../sessions/session-runtime.ts';
import { normaliseLanguage } from '../text/language.ts';
import { checkTurn, type ExpectationFailure, type TurnOutcome } from './expectations.ts';
import { judgeFailures, judgePlay, knowledgeUsed, type Complete, type JudgeLine, type JudgeRecord, type PassageLookup } from './judge.ts';
import { DEFAULT_PERSONA_TURNS, MAX_FAILURES_KEPT } from './limits.ts';
import type { Persona, Scenario } from './scenario-schema.ts';
import { nextMove } from './simulated-customer.ts';

/** The test customer's number when the scenario gives none (a number of the range kept for fiction). */
export const DEFAULT_TEST_PHONE = '+15555550100';

export interface RunFailure extends ExpectationFailure {
  /** Which of the run's plays (1-based). */
  run: number;
  /** Which customer turn (1-based); 0: before the first turn (the integrator could not be used). */
  turn: number;
}

export interface TranscriptTurn {
  customer: string;
  reply: string | null;
  source: string | null;
  handoff: TurnOutcome['handoff'];
  tools: TurnOutcome['tools'];
  ms: number;
  /** Whether every expectation of the turn held. */
  passed: boolean;
  /** The simulated customer wrote this message (a persona's turn). */
  simulated?: true;
}

/** How a play's simulated customer ended, as kept on its transcript. */
export interface PersonaRecord {
  /** The customer said the goal was reached. */
  reached: boolean;
  /**
   * reached or abandoned: the customer said so (`reason` its words); turns: its messages ran out; deadline: the play's
   * deadline passed; failed: the model failed or answered what could not be read, or a turn failed (`reason` says).
   */
  ended: 'reached' | 'abandoned' | 'turns' | 'deadline' | 'failed';
  reason: string;
  /** The messages it wrote. */
  messages: number;
}

export interface Transcript {
  run: number;
  /** The test conversation's session (GET /v1/sessions/{id} opens it). */
  session_id: string | null;
  /**
   * The conversation's customer once the play ended: the scenario's `customer`, and what the integrator's answers set
   * (`customer.email`, `customer.name`, saved as for a WhatsApp customer); null without a session.
   */
  customer: { phone: string | null; email: string | null; name: string | null } | null;
  turns: TranscriptTurn[];
  /** A scenario with a judge: the verdict and reason on each criterion, or why there is none. */
  judge?: JudgeRecord;
  /** A scenario with a persona: whether its customer reached the goal, and how it ended. */
  persona?: PersonaRecord;
}

export interface ScenarioRunnerDeps {
  webchat: {
    testTurn(workspaceId: string, conversationId: string, input: { message: string; language: string | null; test: TestConversation }): Promise<TurnResult>;
  };
  /** The channels' runtime (WhatsApp's and the phone's turns; every test conversation is ended through it). */
  runtime: Pick<SessionRuntime, 'handleMessage' | 'end'>;
  sessions: Pick<SessionsRepository, 'find' | 'turns'>;
  /**
   * The endpoint a scenario's integrator names, checked as replay checks a candidate (the outbound rules), signed with
   * the workspace's key; an AppError says why it cannot be used.
   */
  candidate: (workspaceId: string, url: string) => Promise<Credentials>;
  /** The workspace's model for the judge (OpenAiAdapter.complete); null: the service has none. */
  judge: Complete | null;
  /** The workspace's model playing a persona's customer; null: the service has none. */
  customer: Complete | null;
  /** Deadline of a play's simulated part, in ms (PERSONA_DEADLINE_MS). */
  personaDeadlineMs: number;
  /** The passages of these chunk ids in the workspace, as far as they still exist (the knowledge the judge reads). */
  passages: PassageLookup;
}

export interface PlayInput {
  runId: string;
  workspaceId: string;
  scenario: Scenario;
  runs: number;
  /** Aborted when the engine stops or lost the run: the play stops between turns. */
  signal: AbortSignal;
}

export function createScenarioRunner(deps: ScenarioRunnerDeps) {
  /** One customer message on the scenario's channel, and the turn's result. */
  async function say(input: PlayInput, externalId: string, text: string, turnId: string, language: string | null, test: TestConversation): Promise<TurnResult> {
    const { workspaceId, scenario } = input;
    const phone = scenario.customer?.phone ?? DEFAULT_TEST_PHONE;
    const digits = phone.replace(/[^0-9]/g, '');
    switch (scenario.channel) {
      case 'webchat':
        return deps.webchat.testTurn(workspaceId, externalId, { message: text, language, test });
      case 'whatsapp': {
        const answered = await whatsappTurn(deps.runtime, { workspaceId, conversation: externalId, text, waId: digits, turnId, test });
        if (answered.outcome !== 'reply') return { cancelled: false, held: true, sessionId: '', turnId, text: '', unsent: '', source: 'fallback', language: language ?? 'en', handoff: null };
        // What would have been sent: the reply cut to WhatsApp's length.
        return { ...answered.result, text: answered.body };
      }
      case 'phone':
        return deps.runtime.handleMessage({ workspaceId, channel: 'phone', externalId, text, language: normaliseLanguage(language ?? 'en'), customerPhone: `+${digits}`, turnId, test });
    }
  }

  /** One play of the scenario: a new test conversation, turn after turn (the scripted ones, then a persona's). */
  async function playOnce(input: PlayInput, run: number, test: TestConversation): Promise<{ failures: RunFailure[]; transcript: Transcript }> {
    const { workspaceId, scenario } = input;
    const externalId = randomUUID();
    const scripted = scenario.turns ?? [];
    const played: PlayedTurn[] = [];
    const failures: RunFailure[] = [];
    let language: string | null = scenario.language ?? null;
    let persona: PersonaRecord | undefined;
    /** A turn failed (its failure says why): the play stopped there. */
    let turnFailed = false;

    /** Says one customer message and keeps what came back; false when the turn failed (the play stops there). */
    async function turn(customer: string, simulated: boolean): Promise<boolean> {
      const turnId = randomUUID();
      const started = performance.now();
      let result: TurnResult;
      try {
        result = await say(input, externalId, customer, turnId, language, test);
      } catch (err) {
        failures.push({ run, turn: played.length + 1, expectation: 'a reply', got: `the turn failed: ${errorText(err)}` });
        turnFailed = true;
        return false;
      }
      const ms = performance.now() - started;
      // The turn's record is under the id the channel gave it (web chat makes its own).
      const recordId = result.turnId || turnId;
      let outcome: TurnOutcome;
      if (result.cancelled) outcome = { reply: null, source: null, handoff: null, tools: [], ms, noReply: 'the turn was cancelled' };
      else if (result.held) outcome = { reply: null, source: null, handoff: null, tools: [], ms, noReply: 'a person of the team handles the conversation, so nobody answered' };
      else {
        language = result.language;
        const handoff = result.handoff ? { kind: result.handoff.kind, connected: result.handoff.connected } : null;
        outcome = { reply: result.text, source: result.source, handoff, tools: [], ms };
      }
      played.push({ customer, simulated, turnId: recordId, outcome });
      return true;
    }

    try {
      let going = true;
      for (const t of scripted) {
        if (input.signal.aborted) throw input.signal.reason;
        if (!(going = await turn(t.customer, false))) break;
      }
      if (scenario.persona) {
        persona = going
          ? await simulate(input, scenario.persona, played, (text) => turn(text, true))
          : { reached: false, ended: 'failed', reason: 'a scripted turn before the simulated customer failed', messages: 0 };
      }
    } finally {
      // Ended, and its last writes done, before its record is read (and so nothing of it stays live here).
      await deps.runtime.end(workspaceId, scenario.channel, externalId);
    }
    const session = await deps.sessions.find(workspaceId, scenario.channel, externalId);
    const records = new Map((session ? await deps.sessions.turns(session.id) : []).map((t) => [t.id, t]));
    const turns: TranscriptTurn[] = played.map(({ customer, simulated, turnId, outcome }, i) => {
      const record = records.get(turnId);
      if (record) outcome.tools = toolCalls(record.tool_rounds);
      const turnFailures = checkTurn(simulated ? undefined : scripted[i]?.expect, outcome);
      failures.push(...turnFailures.map((f) => ({ run, turn: i + 1, ...f })));
      const { reply, source, handoff, tools } = outcome;
      const passed = turnFailures.length === 0;
      return { customer, reply, source, handoff, tools, ms: Math.round(outcome.ms), passed, ...(simulated ? { simulated: true as const } : {}) };
    });
    const customer = session ? { phone: session.customer_phone, email: session.customer_email, name: session.customer_name } : null;
    const transcript: Transcript = { run, session_id: session?.id ?? null, customer, turns };
    if (scenario.persona && persona) {
      transcript.persona = persona;
      const simulated = played.filter((p) => p.simulated).map((p) => p.outcome);
      failures.push(...personaFailures(scenario.persona, persona, simulated, turnFailed).map((f) => ({ run, turn: played.length, ...f })));
    }
    // A conversation the simulated customer broke off because the model failed is not worth a judge's request.
    if (scenario.judge && played.length > 0 && persona?.ended !== 'failed') {
      // The judge's failures belong to the conversation as a whole: they are reported on its last turn.
      const knowledge = await knowledgeUsed(deps.passages, workspaceId, played.map(({ turnId }) => records.get(turnId)?.knowledge));
      transcript.judge = await judgePlay(deps.judge, { criteria: scenario.judge.criteria, lines: judgeLines(played), knowledge }, input.signal);
      failures.push(...judgeFailures(transcript.judge).map((f) => ({ run, turn: played.length, ...f })));
    }
    return { failures: failures.sort((a, b) => a.turn - b.turn), transcript };
  }

  /**
   * The simulated customer's part of a play: asks the model for the next move, says each message through `say`, until
   * the customer ends it, its messages run out or the deadline passes. Throws only the run's own signal.
   */
  async function simulate(input: PlayInput, persona: Persona, played: readonly PlayedTurn[], say: (text: string) => Promise<boolean>): Promise<PersonaRecord> {
    const complete = deps.customer;
    if (complete === null) return { reached: false, ended: 'failed', reason: 'the simulated customer needs a language model, and this service has none (LLM_BASE_URL is not set)', messages: 0 };
    const maxTurns = persona.max_turns ?? DEFAULT_PERSONA_TURNS;
    const deadline = AbortSignal.timeout(deps.personaDeadlineMs);
    const signal = AbortSignal.any([input.signal, deadline]);
    const outOfTime = (messages: number): PersonaRecord => ({ reached: false, ended: 'deadline', reason: `the play's deadline (${deps.personaDeadlineMs / 1000} s) passed before the customer was done`, messages });
    let messages = 0;
    for (;;) {
      if (input.signal.aborted) throw input.signal.reason;
      if (deadline.aborted) return outOfTime(messages);
      const last = messages >= maxTurns;
      const customer = { goal: persona.goal, ...(persona.style === undefined ? {} : { style: persona.style }) };
      let move: Awaited<ReturnType<typeof nextMove>>;
      try {
        const { channel, language } = input.scenario;
        move = await nextMove(complete, { persona: customer, channel, language: language ?? null, lines: judgeLines(played), last }, signal);
      } catch (err) {
        if (input.signal.aborted) throw input.signal.reason;
        if (deadline.aborted) return outOfTime(messages);
        throw err;
      }
      if ('error' in move) return { reached: false, ended: 'failed', reason: move.error, messages };
      if (move.status !== 'continue') return { reached: move.status === 'reached', ended: move.status, reason: move.reason, messages };
      if (last) return { reached: false, ended: 'turns', reason: `the customer's ${maxTurns} messages ran out before it said the goal was reached`, messages };
      messages++;
      if (!(await say(move.message))) return { reached: false, ended: 'failed', reason: 'a turn of the simulated customer failed', messages };
    }
  }

  return {
    /** Plays the run's `runs` conversations and answers how many passed, the failures and the transcripts. */
    async play(input: PlayInput): Promise<RunResult> {
      const { scenario } = input;
      const integrator = scenario.integrator ?? 'live';
      let target: TestConversation['integrator'];
      if (typeof integrator === 'string') target = integrator;
      else {
        try {
          target = await deps.candidate(input.workspaceId, integrator.url);
        } catch (err) {
          const failure: RunFailure = { run: 1, turn: 0, expectation: `integrator ${integrator.url}`, got: `the candidate endpoint cannot be used: ${errorText(err)}` };
          return { passed: 0, failures: [failure], transcripts: [] };
        }
      }
      const { email, name } = scenario.customer ?? {};
      const customer = { ...(email === undefined ? {} : { email }), ...(name === undefined ? {} : { name }) };
      const test: TestConversation = { runId: input.runId, integrator: target, toolMocks: scenario.mocks?.tools ?? {}, customer };
      let passed = 0;
      const failures: RunFailure[] = [];
      const transcripts: Transcript[] = [];
      for (let run = 1; run <= input.runs; run++) {
        if (input.signal.aborted) throw input.signal.reason;
        const played = await playOnce(input, run, test);
        if (played.failures.length === 0) passed++;
        failures.push(...played.failures);
        transcripts.push(played.transcript);
      }
      return { passed, failures: failures.slice(0, MAX_FAILURES_KEPT), transcripts };
    },
  };
}

export type ScenarioRunner = ReturnType<typeof createScenarioRunner>;

/** A customer message said in a play, and what came back. */
interface PlayedTurn {
  customer: string;
  simulated: boolean;
  turnId: string;
  outcome: TurnOutcome;
}

/**
 * The failures of a persona's part (docs/scenarios.md, "Simulated customers"): a model that failed (`turnFailed`: the
 * play stopped at a turn that failed instead, already a failure); the goal not
 * reached (or reached, with `goal_reached: false`); the handoff and source expected of the simulated turns.
 */
export function personaFailures(persona: Persona, record: PersonaRecord, simulated: readonly TurnOutcome[], turnFailed: boolean): ExpectationFailure[] {
  // A turn that failed is a failure of its own ("a reply"); otherwise the model gave no move.
  if (record.ended === 'failed') return turnFailed ? [] : [{ expectation: 'simulated customer', got: record.reason }];
  const failures: ExpectationFailure[] = [];
  const expect = persona.expect ?? {};
  const wanted = expect.goal_reached ?? true;
  if (wanted && !record.reached) {
    const got = record.ended === 'abandoned' ? `the customer gave up: ${record.reason}` : record.reason;
    failures.push({ expectation: 'goal_reached', got });
  }
  if (!wanted && record.reached) failures.push({ expectation: 'goal_reached false', got: `the customer reached the goal: ${record.reason}` });
  if (expect.handoff !== undefined) {
    const kinds = simulated.flatMap((o) => (o.handoff ? [`${o.handoff.kind}${o.handoff.connected ? ' (connected)' : ''}`] : []));
    const met = typeof expect.handoff === 'boolean' ? (kinds.length > 0) === expect.handoff : simulated.some((o) => o.handoff?.kind === expect.handoff);
    if (!met) failures.push({ expectation: `handoff ${String(expect.handoff)} (simulated turns)`, got: kinds.length === 0 ? 'no handoff' : kinds.join(', ') });
  }
  if (expect.source !== undefined && !simulated.some((o) => o.source === expect.source)) {
    const sources = [...new Set(simulated.map((o) => o.source ?? 'no reply'))];
    failures.push({ expectation: `source ${expect.source} (simulated turns)`, got: sources.length === 0 ? 'no simulated turn' : sources.join(', ') });
  }
  return failures;
}

/** The conversation as the judge reads it: each customer message, then the reply (or why none came) and any handoff. */
function judgeLines(turns: readonly { customer: string; outcome: TurnOutcome }[]): JudgeLine[] {
  return turns.flatMap(({ customer, outcome }) => {
    const notes = [
      ...(outcome.reply === null ? [outcome.noReply ?? 'no reply came'] : []),
      ...(outcome.handoff ? [`handoff: ${outcome.handoff.kind === 'human' ? 'to a person of the team' : 'forwarded'}${outcome.handoff.connected ? ', connected' : ''}`] : []),
    ];
    const bot: JudgeLine = { from: 'bot', text: outcome.reply, ...(notes.length > 0 ? { note: notes.join('; ') } : {}) };
    return [{ from: 'customer', text: customer }, bot];
  });
}

/** The tool calls of a turn's record, each with whether it worked. */
function toolCalls(stored: unknown): TurnOutcome['tools'] {
  const rounds = (typeof stored === 'string' ? JSON.parse(stored) : stored) as ToolRound[] | null;
  return (rounds ?? []).flatMap((round) =>
    round.calls.map((call) => ({ name: call.name, args: call.args, ok: round.outcomes.find((o) => o.id === call.id)?.ok ?? false })),
  );
}
