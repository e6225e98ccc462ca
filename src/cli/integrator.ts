/**
 * For integrators and their owners: `doctor` checks an endpoint from wherever it runs (no database; OUTBOUND_ALLOW as
 * the service reads it), and `replay` asks a running service (its HTTP API, an owner's or admin's token), since the
 * stored turns, the sealed key and the rate limit are the service's.
 */
import { loadConfig } from '../config.ts';
import { DOCTOR_LATENCY_REQUESTS, MAX_DOCTOR_REQUESTS, doctorLines, runDoctor } from '../integration/doctor.ts';
import { REPLAY_MAX_TURNS, replayLines, type ReplayReport } from '../integration/replay.ts';
import { GuardedClient } from '../net/guarded-client.ts';
import { CHANNELS, type Channel } from '../channels-and-handoffs.ts';
import { UsageError, type CliCommand, type CliOptions } from './context.ts';

async function doctor(values: CliOptions, positionals: string[]): Promise<number> {
  const [endpointUrl, ...rest] = positionals;
  if (!endpointUrl || rest.length > 0) throw new UsageError('doctor takes one endpoint URL.');
  const key = values.key ?? process.env.BOTLINK_KEY;
  if (!key) throw new UsageError('--key (or BOTLINK_KEY) is required: the key the endpoint verifies signatures with.');
  const channel = values.channel ?? 'webchat';
  if (!(CHANNELS as readonly string[]).includes(channel)) throw new UsageError(`--channel must be one of ${CHANNELS.join(', ')}.`);
  const requests = values.requests === undefined ? DOCTOR_LATENCY_REQUESTS : Number(values.requests);
  if (!(Number.isInteger(requests) && requests >= 1 && requests <= MAX_DOCTOR_REQUESTS)) throw new UsageError(`--requests must be a whole number from 1 to ${MAX_DOCTOR_REQUESTS}.`);
  if (values.args !== undefined && values.tool === undefined) throw new UsageError('--args goes with --tool.');
  let args: unknown = {};
  if (values.args !== undefined) {
    try {
      args = JSON.parse(values.args) as unknown;
    } catch {
      throw new UsageError('--args must be a JSON object, like \'{"order":"1234"}\'.');
    }
  }
  const http = new GuardedClient({ allow: loadConfig().outboundAllow });
  try {
    const report = await runDoctor({ http }, {
      endpointUrl,
      key,
      channel: channel as Channel,
      requests,
      ...(values.message === undefined ? {} : { message: values.message }),
      ...(values.tool === undefined ? {} : { tool: { name: values.tool, args } }),
    });
    console.log(values.json ? JSON.stringify(report, null, 2) : doctorLines(report).join('\n'));
    return report.ok ? 0 : 1;
  } finally {
    await http.close();
  }
}

async function replay(values: CliOptions, positionals: string[]): Promise<number> {
  if (positionals.length > 0) throw new UsageError('replay takes no positional arguments.');
  if (!values.endpoint) throw new UsageError('--endpoint is required: the candidate endpoint URL.');
  const last = Number(values.last);
  if (!(Number.isInteger(last) && last >= 1 && last <= REPLAY_MAX_TURNS)) throw new UsageError(`--last must be a whole number from 1 to ${REPLAY_MAX_TURNS}.`);
  const token = values.token ?? process.env.BOTLINK_TOKEN;
  if (!token) throw new UsageError('--token (or BOTLINK_TOKEN) is required: an owner\'s or admin\'s token.');
  const base = (values.url ?? process.env.BOTLINK_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  const res = await fetch(`${base}/v1/integration/replay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint_url: values.endpoint, last, ...(values.key === undefined ? {} : { key: values.key }), ...(values['no-judge'] ? { judge: false } : {}) }),
  });
  const text = await res.text();
  if (res.status !== 200) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error: { message: string } }).error.message;
    } catch {
      // Not our error body: show what came.
    }
    const retry = res.headers.get('retry-after');
    console.error(`botlink cli: the service answered HTTP ${res.status}: ${message}${retry ? ` (retry after ${retry} s)` : ''}`);
    return 1;
  }
  const report = JSON.parse(text) as ReplayReport;
  console.log(values.json ? JSON.stringify(report, null, 2) : replayLines(report).join('\n'));
  return report.summary.now_failing > 0 ? 1 : 0;
}

export const integratorCommands: CliCommand[] = [
  {
    name: 'doctor',
    usage: `doctor <endpoint_url> --key <key> [--json] [--channel webchat|whatsapp|phone] [--message <text>]
      [--requests <1-${MAX_DOCTOR_REQUESTS}>] [--tool <name> --args <json>]
      checks an integrator's endpoint as the engine uses it (address, TLS, signatures, answer, latency over --requests
      signed requests, default ${DOCTOR_LATENCY_REQUESTS}, the tools manifest, one tool call when --tool names it); exit 1 when a
      check fails. The key may also come from BOTLINK_KEY; OUTBOUND_ALLOW exempts addresses as in the service.`,
    run: doctor,
  },
  {
    name: 'replay',
    usage: `replay --endpoint <candidate url> [--key <key>] --last <1-${REPLAY_MAX_TURNS}> [--json] [--no-judge] [--url <service url>] [--token <token>]
      asks the running service at --url (or BOTLINK_URL, default http://localhost:8080) with an owner's or admin's
      --token (or BOTLINK_TOKEN) to send the workspace's last N customer messages to the candidate, and prints each
      answer beside the live one. Without --key the workspace's current key signs. With a model on the service, each
      changed answer is labelled better, worse or equal by its judge, with the reason (--no-judge: not asked); the last
      line says how many got worse. Exit 1 when a message the live endpoint answered gets no answer from the candidate
      (now_failing), or when the service refuses; the judge's labels do not change the exit code.`,
    run: replay,
  },
];
