/**
 * The session machine's I/O actors, provided from the real services: the bot-link call, the knowledge search, the
 * tools (manifest and calls), the AI step and the handoff. The machine (machines/session.machine.ts) names them;
 * this module is the only place that fills them in.
 */
import { fromPromise } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.ts';
import type { HandoffResult, KnowledgeSummary } from '../../machines/session-types.ts';
import type { AiPort, AiStep } from '../ai/types.ts';
import { buildChannelRequest } from '../botlink/channel-request.ts';
import type { BotLinkClient } from '../botlink/client.ts';
import type { EndpointHealthTracker } from '../botlink/endpoint-health-tracker.ts';
import { sendWithHealth } from '../botlink/health-aware-send.ts';
import type { ToolInvocation, ToolOutcome, ToolSpec, ToolsPort } from '../botlink/tools-types.ts';
import { MAX_TOOL_RESULT_CHARS } from '../limits.ts';
import { cutToChars } from '../text/cut.ts';
import type { TestConversation } from './test-conversation.ts';
import type { KnowledgeSearch } from '../knowledge/types.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import { decideHandoff, type HandoffDeps } from './handoff.ts';
import { summary } from './turn-record.ts';
import { inSpan } from '../tracing.ts';

export interface Credentials {
  endpointUrl: string;
  key: string;
}

export interface SessionActorDeps extends HandoffDeps {
  /** The workspace's bot-link endpoint and opened key; undefined when it has none. */
  credentials: (workspaceId: string) => Promise<Credentials | undefined>;
  botlink: BotLinkClient;
  /** The endpoints' shared health: a down endpoint is not waited for (absent: always wait). */
  health?: EndpointHealthTracker;
  knowledge: KnowledgeSearch;
  ai: AiPort;
  tools: ToolsPort;
  now: () => number;
}

/** What the runtime knows about a live session that the actors need: its row id and the running turn's stream. */
export interface LiveSessionView {
  sessionId: string;
  /** A scenario's test conversation (docs/scenarios.md): whom it asks, its tool mocks; null for a customer's. */
  test: TestConversation | null;
  /** Set when the turn streams its reply (the phone): each piece of the AI's answer, and the step's bookkeeping. */
  stream: { speak: (piece: string, language: string, signal: AbortSignal) => void; record: (step: AiStep) => AiStep } | null;
}

export type SessionLookup = (workspaceId: string, channel: Channel, externalId: string, turnId?: string) => LiveSessionView | null;

export function provideSessionMachine(deps: SessionActorDeps, lookup: SessionLookup) {
  const { now } = deps;
  const testOf = (input: { workspaceId: string; channel?: Channel; conversationId?: string }) =>
    input.channel && input.conversationId ? (lookup(input.workspaceId, input.channel, input.conversationId)?.test ?? null) : null;
  /** The endpoint a turn asks: the workspace's, or the one its scenario names (docs/scenarios.md, "The integrator"). */
  const credentialsFor = (workspaceId: string, test: TestConversation | null): Promise<Credentials | undefined> => {
    if (test === null || test.integrator === 'live') return deps.credentials(workspaceId);
    return Promise.resolve(test.integrator === 'none' ? undefined : test.integrator);
  };
  return sessionMachine.provide({
    actors: {
      callBotLink: fromPromise(({ input, signal }) =>
        inSpan('botlink.request', input.turnId, { 'botlink.channel': input.channel }, async (span) => {
          const test = testOf(input);
          const credentials = await credentialsFor(input.workspaceId, test);
          if (!credentials) return summary({ outcome: 'no_answer', reason: 'not_configured' });
          const timeoutMs = input.deadlineAt - now();
          // A restored turn whose deadline has passed does not call again (protocol §8: never longer than the deadline).
          if (timeoutMs <= 0) return summary({ outcome: 'no_answer', reason: 'timeout' });
          const request = buildChannelRequest({
            channel: input.channel,
            conversationId: input.conversationId,
            message: input.message,
            language: input.language,
            customerPhone: input.customerPhone,
            now: new Date(now()),
          });
          const send = { endpointUrl: credentials.endpointUrl, key: credentials.key, request, timeoutMs, signal };
          // A test neither reads nor feeds the endpoint's health: it sees the endpoint as it answers now.
          const result = deps.health && test === null
            ? await sendWithHealth({ botlink: deps.botlink, health: deps.health }, input.workspaceId, send)
            : { exchange: await deps.botlink.send(send), wait: undefined };
          const endpoint = result.wait ? { endpoint: result.wait } : {};
          if (result.exchange === null) {
            span.setAttribute('botlink.outcome', 'endpoint_down');
            // docs/architecture.md, "Endpoint health": the endpoint is down, so the turn did not wait; the request still
            // runs and its outcome feeds the health.
            return summary({ outcome: 'no_answer', reason: 'endpoint_down', latencyMs: 0, ...endpoint });
          }
          const { exchange } = result;
          const o = exchange.outcome;
          span.setAttributes({ 'botlink.outcome': o.outcome === 'answer' ? 'answer' : o.reason, ...(exchange.httpStatus === null ? {} : { 'http.response.status_code': exchange.httpStatus }) });
          return summary({
            outcome: o.outcome,
            reason: o.outcome === 'answer' ? 'answer' : o.reason,
            ...(o.outcome === 'answer' ? { reply: o.answer.reply, handled: o.answer.handled, handoff: o.answer.handoff, customer: o.answer.customer } : {}),
            problems: o.problems,
            httpStatus: exchange.httpStatus,
            latencyMs: exchange.latencyMs,
            firstByteMs: exchange.firstByteMs,
            ...endpoint,
          });
        }),
      ),
      searchKnowledge: fromPromise(({ input, signal }): Promise<KnowledgeSummary> =>
        inSpan('knowledge.search', input.turnId, { 'botlink.language': input.language }, async (span) => {
          const result = await deps.knowledge.search(input.workspaceId, input.message, input.language, { signal });
          span.setAttributes({ 'botlink.passages': result.passages.length, 'botlink.confident': result.confident });
          return { passages: result.passages, confident: result.confident, tookMs: result.tookMs };
        }),
      ),
      loadTools: fromPromise(async ({ input, signal }) => {
        const test = testOf(input);
        const credentials = await credentialsFor(input.workspaceId, test);
        if (!credentials) return mockedTools([], test);
        // Never past the turn's own deadline (protocol §8); a down endpoint's tools are offered only from the cache
        // (its manifest fetch goes on in the background and fills the cache if the endpoint answers).
        const down = deps.health && test === null ? (await deps.health.current(input.workspaceId, credentials.endpointUrl)).state === 'down' : false;
        const waitMs = down ? 0 : input.deadlineAt === null ? undefined : Math.max(0, input.deadlineAt - now());
        const manifest = await deps.tools.manifest(toolsCacheKey(input.workspaceId, test), credentials, signal, waitMs);
        return mockedTools(manifest.tools, test);
      }),
      aiStep: fromPromise(({ input, signal }) =>
        inSpan('model', input.turnId, { 'botlink.tool_rounds': input.rounds.length }, async () => {
          const started = performance.now();
          const stream = lookup(input.workspaceId, input.channel, input.conversationId, input.turnId)?.stream;
          if (!stream) {
            const step = await deps.ai.step({ ...input, signal });
            return { step, elapsedMs: performance.now() - started };
          }
          const step = await deps.ai.step({ ...input, signal, onText: (piece) => stream.speak(piece, input.language, signal) });
          return { step: stream.record(step), elapsedMs: performance.now() - started };
        }),
      ),
      runTools: fromPromise(async ({ input, signal }) => {
        const test = testOf(input);
        const credentials = await credentialsFor(input.workspaceId, test);
        // The calls of one round run concurrently (each has its own 4 s deadline inside the tools client).
        return Promise.all(
          input.calls.map((c): Promise<ToolOutcome> => {
            if (test !== null && Object.hasOwn(test.toolMocks, c.name)) return Promise.resolve(mockedOutcome(c, test.toolMocks[c.name]));
            if (!credentials) {
              return Promise.resolve({ id: c.id, name: c.name, ok: false, content: 'Tools are not configured.', failure: 'unknown_tool' as const, latencyMs: 0, httpStatus: null });
            }
            return inSpan('tool.call', input.turnId, { 'botlink.tool': c.name }, () =>
              deps.tools.call(
                toolsCacheKey(input.workspaceId, test),
                credentials,
                { ...c, language: input.language, conversationId: input.conversationId },
                signal,
              ),
            );
          }),
        );
      }),
      handoff: fromPromise(async ({ input }): Promise<HandoffResult> => {
        const view = lookup(input.workspaceId, input.channel, input.conversationId);
        // A test conversation's handoff is decided by the same rule, and the team is not notified of it.
        const handoffDeps = view?.test ? { ...deps, sessions: { ...deps.sessions, addNotification: async () => {} } } : deps;
        return decideHandoff(handoffDeps, input, view?.sessionId ?? null);
      }),
    },
  });
}

export type ProvidedSessionMachine = ReturnType<typeof provideSessionMachine>;

/**
 * The tools client caches one manifest per key: a candidate endpoint's is kept apart from the workspace's own, so a
 * test never replaces what customers' turns are offered.
 */
function toolsCacheKey(workspaceId: string, test: TestConversation | null): string {
  return test !== null && typeof test.integrator === 'object' ? `${workspaceId}\u0000candidate\u0000${test.integrator.endpointUrl}` : workspaceId;
}

/** The tools offered: the manifest's, and each mocked tool it does not have (any arguments). */
function mockedTools(tools: ToolSpec[], test: TestConversation | null): ToolSpec[] {
  if (test === null) return tools;
  const extra = Object.keys(test.toolMocks)
    .filter((name) => !tools.some((t) => t.name === name))
    .map((name) => ({ name, description: `The tool ${name}.`, parameters: { type: 'object', properties: {} } }));
  return [...tools, ...extra];
}

/** A mocked tool's answer, as the AI would see the integrator's `{ok: true, result}` (protocol §2.5). */
function mockedOutcome(call: ToolInvocation, result: unknown): ToolOutcome {
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  return { id: call.id, name: call.name, ok: true, content: cutToChars(text, MAX_TOOL_RESULT_CHARS), latencyMs: 0, httpStatus: null };
}
