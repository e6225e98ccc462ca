/**
 * The endpoint doctor (`npm run cli -- doctor <endpoint_url> --key <key>`, docs/integrators.md "Check your endpoint"):
 * checks an integrator's endpoint the way the engine uses it, with the engine's own code — the guarded client's
 * address rules (protocol §4), the signing (§5), the answer's interpretation (§2.2, §7), the tools manifest's
 * validation (§2.3, §4.3) and the tools client (§4.4) — so that what the doctor passes is what a conversation gets.
 *
 * Every finding is one {@link DoctorCheck}: pass, warn or fail, with one sentence. A fail is something that breaks or
 * endangers conversations (no answer, a signature that is not checked, a tool the engine drops); a warn is something
 * that works but worse than it should (slower than the phone waits, a field of the answer ignored).
 *
 * The requests are ordinary signed channel requests with channel `webchat` (the kind the dashboard's test button and
 * the health probe send, protocol §4.6) unless another channel is asked for, and a session id of their own
 * (`botlink-doctor-…`), so an integrator can tell them from customers in its logs.
 */
import { randomUUID } from 'node:crypto';
import { buildChannelRequest } from '../botlink/channel-request.ts';
import { createBotLinkClient, type BotLinkExchange } from '../botlink/client.ts';
import { createToolSchemaCompiler } from '../botlink/tool-schema.ts';
import { createToolsClient, manifestHeaders } from '../botlink/tools-client.ts';
import { toolsUrl } from '../botlink/tools-base.ts';
import { readToolManifest } from '../botlink/tools-manifest.ts';
import { errorText } from '../errors.ts';
import { CHANNEL_TARGET_MS, CHANNEL_TIMEOUT_MS, MAX_CLOCK_SKEW_SECONDS, MAX_RESPONSE_BYTES, PHONE_CHANNEL_TIMEOUT_MS, TOOL_CALL_TIMEOUT_MS } from '../limits.ts';
import { literalAddress } from '../net/address-policy.ts';
import { OutboundError, type GuardedClient } from '../net/guarded-client.ts';
import { cutToChars } from '../text/cut.ts';
import type { Channel } from '../channels-and-handoffs.ts';

export type DoctorStatus = 'pass' | 'warn' | 'fail';

/** One finding: `check` is a stable name (`url`, `tls`, `signature`, …) a CI script may match on. */
export interface DoctorCheck {
  check: string;
  status: DoctorStatus;
  message: string;
}

export interface DoctorReport {
  endpoint_url: string;
  checks: DoctorCheck[];
  passed: number;
  warnings: number;
  failed: number;
  /** No check failed. */
  ok: boolean;
}

export interface DoctorInput {
  endpointUrl: string;
  /** The shared key, as text (protocol §5.2). */
  key: string;
  /** The channel of the requests; default `webchat` (protocol §4.6). */
  channel?: Channel;
  /** What the requests say; default {@link DOCTOR_MESSAGE}. */
  message?: string;
  /** How many correctly signed requests measure the latency; default {@link DOCTOR_LATENCY_REQUESTS}. */
  requests?: number;
  /** One harmless tool to call, with its arguments: only when the person running the doctor names it. */
  tool?: { name: string; args: unknown };
}

/** What the doctor's requests say: the integrator sees it in its logs. */
export const DOCTOR_MESSAGE = 'This is a check by botlink doctor; no customer is waiting.';
/** Correctly signed requests sent by default to measure the latency. */
export const DOCTOR_LATENCY_REQUESTS = 3;
/** At most this many: the doctor is a check, not a load test. */
export const MAX_DOCTOR_REQUESTS = 10;
/** How old the `sent_at` of the stale-time check is: twice the allowed skew (protocol §5.5.3: 300 s). */
const STALE_SECONDS = 2 * MAX_CLOCK_SKEW_SECONDS;

const seconds = (ms: number): string => `${ms / 1000} s`;

/**
 * Runs every check in order and never throws for anything the endpoint or the network does. Checks that cannot run
 * (the URL is refused, nothing answers) are left out after the fail that says why.
 */
export async function runDoctor(deps: { http: GuardedClient }, input: DoctorInput): Promise<DoctorReport> {
  const { http } = deps;
  const checks: DoctorCheck[] = [];
  const add = (check: string, status: DoctorStatus, message: string): void => void checks.push({ check, status, message });
  try {
    await diagnose(http, input, add);
  } catch (err) {
    // Nothing above is expected to throw; if it does, the report says so rather than the doctor crashing.
    add('doctor', 'fail', `The doctor stopped: ${errorText(err)}`);
  }
  const count = (status: DoctorStatus) => checks.filter((c) => c.status === status).length;
  const failed = count('fail');
  return { endpoint_url: input.endpointUrl, checks, passed: count('pass'), warnings: count('warn'), failed, ok: failed === 0 };
}

type Add = (check: string, status: DoctorStatus, message: string) => void;

async function diagnose(http: GuardedClient, input: DoctorInput, add: Add): Promise<void> {
  const { endpointUrl, key } = input;
  const channel = input.channel ?? 'webchat';
  const requests = Math.min(MAX_DOCTOR_REQUESTS, Math.max(1, Math.floor(input.requests ?? DOCTOR_LATENCY_REQUESTS)));
  const botlink = createBotLinkClient({ http });
  const sessionId = `botlink-doctor-${randomUUID()}`;
  const send = (options: { key?: string; sentAt?: Date } = {}): Promise<BotLinkExchange> =>
    botlink.send({
      endpointUrl,
      key: options.key ?? key,
      // The longest deadline the engine gives (protocol §8), so a slow answer is measured rather than cut off.
      timeoutMs: CHANNEL_TIMEOUT_MS,
      request: buildChannelRequest({ channel, conversationId: sessionId, message: input.message ?? DOCTOR_MESSAGE, language: 'en', customerPhone: null, ...(options.sentAt ? { now: options.sentAt } : {}) }),
    });

  // The address rules of protocol §4, exactly as saving the URL in the dashboard applies them.
  const verdict = await http.validateUrl(endpointUrl);
  if (!verdict.ok) {
    add('url', 'fail', `The engine refuses this URL: ${verdict.reason}.`);
    return;
  }
  const host = verdict.url.hostname;
  add('url', 'pass', `https, and ${host} ${literalAddress(host) === null ? 'resolves only to addresses' : 'is an address'} the engine may call.`);

  // A correctly signed request: TLS, the status, the answer's shape.
  const first = await send();
  if (first.httpStatus === null) {
    const outcome = first.outcome.outcome === 'no_answer' ? first.outcome : null;
    if (outcome?.reason === 'timeout') {
      add('latency', 'fail', `A correctly signed request got no answer within ${seconds(CHANNEL_TIMEOUT_MS)}, the longest any conversation waits: the built-in AI answers every customer.`);
    } else {
      add(outcome?.reason === 'tls' ? 'tls' : 'reach', 'fail', outcome?.message ?? 'No answer arrived.');
    }
    return;
  }
  add('tls', 'pass', `The certificate of ${host} is valid and trusted.`);
  const status = first.httpStatus;
  if (status >= 200 && status <= 299) {
    add('signature', 'pass', `A correctly signed request was answered HTTP ${status}.`);
    checkAnswer(first, add);
  } else if (status === 401 || status === 403) {
    add('signature', 'fail', `A correctly signed request was refused with HTTP ${status}: check that the endpoint verifies with this key, used as text (protocol §5.2), over the raw body (protocol §5.5).`);
  } else {
    add('signature', 'fail', `A correctly signed request was answered HTTP ${status}; an answer is a 2xx status (protocol §4.1, §7.1).`);
  }

  // A request signed with another key must be refused (protocol §5.5.4).
  const forged = await send({ key: `${key}-not-the-key` });
  refusal(add, 'wrong_signature', 'fail', 'A request with a wrong signature', forged, 'verify X-Service-Signature over the raw body and answer 401 when it does not match (protocol §5.5)');
  // A correctly signed request from too long ago must be refused too (protocol §5.5.3): else a recorded one replays.
  const stale = await send({ sentAt: new Date(Date.now() - STALE_SECONDS * 1000) });
  refusal(add, 'stale_time', 'warn', `A correctly signed request with a sent_at ${STALE_SECONDS / 60} minutes old`, stale, `refuse a sent_at more than ${MAX_CLOCK_SKEW_SECONDS} s from your clock (protocol §5.5.3), or a recorded request can be sent again`);

  const samples = [first.latencyMs];
  let timeouts = first.outcome.outcome === 'no_answer' && first.outcome.reason === 'timeout' ? 1 : 0;
  for (let i = 1; i < requests; i += 1) {
    const exchange = await send();
    samples.push(exchange.latencyMs);
    if (exchange.outcome.outcome === 'no_answer' && exchange.outcome.reason === 'timeout') timeouts += 1;
  }
  checkLatency(samples, timeouts, add);

  await checkTools(http, endpointUrl, key, add);
  if (input.tool) await callTool(http, input, sessionId, add);
}

/** The answer of protocol §2.2, read by the engine's own {@link interpretChannelResponse}: every problem is a line. */
function checkAnswer(exchange: BotLinkExchange, add: Add): void {
  const { outcome } = exchange;
  if (outcome.outcome === 'answer') {
    const { answer } = outcome;
    if (outcome.problems.length === 0) {
      add('response', 'pass', `The answer follows protocol §2.2: a reply of ${Array.from(answer.reply).length} characters, handled ${answer.handled}, handoff ${answer.handoff ?? 'null'}.`);
    }
    for (const problem of outcome.problems) add('response', 'warn', `${problem.field} ${problem.message}.`);
    return;
  }
  // An empty reply is how an endpoint says "not mine" (docs/integrators.md §1): the built-in AI answers; worth saying.
  if (outcome.reason === 'empty_reply' && outcome.problems.every((p) => p.field === 'reply')) {
    add('response', 'warn', `${outcome.message} Fine when your system does not handle this message; then the built-in AI answers.`);
    return;
  }
  add('response', 'fail', outcome.message);
  for (const problem of outcome.problems) if (problem.field !== 'reply') add('response', 'warn', `${problem.field} ${problem.message}.`);
}

/** A request that must be refused: 401 (or 403) passes, a 2xx is `accepted`, anything else a warning. */
function refusal(add: Add, check: string, accepted: DoctorStatus, what: string, exchange: BotLinkExchange, fix: string): void {
  const status = exchange.httpStatus;
  if (status === 401 || status === 403) {
    add(check, 'pass', `${what} was refused with HTTP ${status}.`);
  } else if (status !== null && status >= 200 && status <= 299) {
    add(check, accepted, `${what} was answered HTTP ${status}: ${fix}.`);
  } else if (status !== null) {
    add(check, 'warn', `${what} was answered HTTP ${status}; a refusal is 401 with no body (protocol §5.5.4).`);
  } else {
    add(check, 'warn', `${what} got no answer: ${exchange.outcome.outcome === 'no_answer' ? exchange.outcome.message : 'no status arrived.'}`);
  }
}

/** The deadlines of protocol §8: 3 s is the target, the phone waits 3.5 s, WhatsApp 6 s. */
function checkLatency(samples: number[], timeouts: number, add: Add): void {
  const sorted = samples.map(Math.round).sort((a, b) => a - b);
  const slowest = sorted.at(-1) ?? 0;
  const median = sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
  const over = `${sorted.length} request${sorted.length === 1 ? '' : 's'}`;
  if (timeouts > 0) {
    add('latency', 'fail', `${timeouts} of ${over} did not answer within ${seconds(CHANNEL_TIMEOUT_MS)}: no conversation waits longer, so the built-in AI answers instead.`);
  } else if (slowest > PHONE_CHANNEL_TIMEOUT_MS) {
    add('latency', 'warn', `The slowest of ${over} took ${slowest} ms (median ${median} ms), past the phone's ${seconds(PHONE_CHANNEL_TIMEOUT_MS)} deadline: callers get the built-in AI's answer; WhatsApp waits ${seconds(CHANNEL_TIMEOUT_MS)}.`);
  } else if (slowest > CHANNEL_TARGET_MS) {
    add('latency', 'warn', `The slowest of ${over} took ${slowest} ms (median ${median} ms), above the ${seconds(CHANNEL_TARGET_MS)} target; the phone waits at most ${seconds(PHONE_CHANNEL_TIMEOUT_MS)}.`);
  } else {
    add('latency', 'pass', `${over} answered in ${sorted[0]}–${slowest} ms (median ${median} ms), within the ${seconds(CHANNEL_TARGET_MS)} target.`);
  }
}

/** The tools base (protocol §4.2–§4.3): the manifest fetched signed, read by the engine's own rules, each tool named. */
async function checkTools(http: GuardedClient, endpointUrl: string, key: string, add: Add): Promise<void> {
  const url = toolsUrl(endpointUrl, '/manifest');
  const get = (withKey: string) =>
    http.request({ method: 'GET', url, headers: manifestHeaders(withKey, Math.floor(Date.now() / 1000)), timeoutMs: TOOL_CALL_TIMEOUT_MS, maxBytes: MAX_RESPONSE_BYTES });
  let response;
  try {
    response = await get(key);
  } catch (err) {
    add('manifest', 'fail', err instanceof OutboundError ? `GET ${url}: ${err.message}` : `GET ${url} failed: ${errorText(err)}`);
    return;
  }
  if (response.status === 404) {
    add('manifest', 'warn', `GET ${url} answered HTTP 404: no tools. Fine when you offer none; the phone AI then uses only your channel answers.`);
    return;
  }
  const { manifest } = readToolManifest(response, createToolSchemaCompiler(), Date.now());
  if (manifest.status !== 'ok') {
    add('manifest', 'fail', manifest.error ?? `GET ${url} could not be read.`);
    return;
  }
  const names = manifest.tools.map((t) => t.name);
  add(
    'manifest',
    manifest.problems.length === 0 ? 'pass' : 'fail',
    `${url} lists ${names.length} usable tool${names.length === 1 ? '' : 's'}${names.length === 0 ? '' : `: ${names.join(', ')}`}${manifest.problems.length === 0 ? '' : `; ${manifest.problems.length} problem${manifest.problems.length === 1 ? '' : 's'} below`}.`,
  );
  for (const tool of manifest.tools) add('tool', 'pass', `${tool.name}: the description and the parameters schema are accepted.`);
  for (const p of manifest.problems) {
    const which = p.index === undefined ? '' : `tool ${p.index + 1}${p.tool === undefined ? '' : ` (${p.tool})`}: `;
    add('tool', 'fail', `${which}${p.field} ${p.message}.`);
  }
  let forged;
  try {
    forged = await get(`${key}-not-the-key`);
  } catch (err) {
    add('tools_signature', 'warn', `A manifest request with a wrong signature got no answer: ${errorText(err)}`);
    return;
  }
  const what = 'A manifest request with a wrong signature';
  if (forged.status === 401 || forged.status === 403) add('tools_signature', 'pass', `${what} was refused with HTTP ${forged.status}.`);
  else if (forged.status >= 200 && forged.status <= 299) add('tools_signature', 'fail', `${what} was answered HTTP ${forged.status}: verify X-Service-Sent-At and X-Service-Signature and answer 401 (protocol §5.4, §5.5).`);
  else add('tools_signature', 'warn', `${what} was answered HTTP ${forged.status}; a refusal is 401 with no body (protocol §5.5.4).`);
}

/** One tool call, through the engine's tools client (arguments checked against the tool's schema before sending). */
async function callTool(http: GuardedClient, input: DoctorInput, sessionId: string, add: Add): Promise<void> {
  const tool = input.tool!;
  const tools = createToolsClient({ http });
  const outcome = await tools.call(
    'doctor',
    { endpointUrl: input.endpointUrl, key: input.key },
    { id: 'doctor', name: tool.name, args: tool.args, language: 'en', conversationId: sessionId },
  );
  if (outcome.ok) {
    add('tool_call', 'pass', `${tool.name} answered ok in ${Math.round(outcome.latencyMs)} ms: ${cutToChars(outcome.content, 120)}${Array.from(outcome.content).length > 120 ? '…' : ''}`);
  } else {
    add('tool_call', 'fail', `${tool.name} failed (${outcome.failure ?? 'unknown'}): ${outcome.content}${outcome.detail ? ` ${outcome.detail}` : ''}`);
  }
}

/** The report as the lines the CLI prints: `PASS  tls              The certificate …`, and a count at the end. */
export function doctorLines(report: DoctorReport): string[] {
  const lines = report.checks.map((c) => `${c.status.toUpperCase()}  ${c.check.padEnd(16)} ${c.message}`);
  lines.push(`${report.passed} passed, ${report.warnings} warning${report.warnings === 1 ? '' : 's'}, ${report.failed} failed`);
  return lines;
}
