/**
 * A driver for profiling the Bot Link client (bench/botlink-client.bench.ts without the rounds and the report):
 * `node --cpu-prof bench/repro/botlink-client-profile.ts botlink 10` keeps 64 requests in flight for 10 s against the
 * loopback integrator and prints the client CPU per request; `plain` does the same with plain undici.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Agent } from 'undici';
import { buildChannelRequest, encodeChannelRequest } from '../../src/botlink/channel-request.ts';
import { createBotLinkClient } from '../../src/botlink/client.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { startIntegratorProcess } from '../lib/integrator-process.ts';

const modes = (process.argv[2] ?? 'botlink').split(',');
const seconds = Number(process.argv[3] ?? 5);
const concurrency = 64;
const ca = readFileSync(new URL('../../test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
const key = 'bench-key-'.padEnd(64, '0123456789abcdef');
const path = '/botlink/channel';
const input = (seq: number) => ({
  channel: 'whatsapp' as const,
  conversationId: `wa-${String(seq % 100_000_000).padStart(8, '0')}`,
  message: 'Hello, where is my order 1234? I ordered it last Tuesday.',
  language: 'nl-NL',
  customerPhone: '+31612345678',
});

const integrator = await startIntegratorProcess();
const endpointUrl = `${integrator.origin}${path}`;
const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca, connectionsPerOrigin: concurrency });
const botlink = createBotLinkClient({ http });
const plainAgent = new Agent({ connections: concurrency, allowH2: false, connect: { ca } });
const prebuilt = encodeChannelRequest(buildChannelRequest(input(0)), key);

const once: Record<string, (seq: number) => Promise<boolean>> = {
  async plain() {
    const { statusCode, body } = await plainAgent.request({ origin: integrator.origin, path, method: 'POST', headers: prebuilt.headers, body: prebuilt.body });
    await body.text();
    return statusCode === 200;
  },
  async botlink(seq) {
    const exchange = await botlink.send({ endpointUrl, key, request: buildChannelRequest(input(seq)) });
    return exchange.outcome.outcome === 'answer';
  },
};

async function run(mode: string, secs: number): Promise<void> {
  const fn = once[mode]!;
  let seq = 0;
  let done = 0;
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const deadline = performance.now() + secs * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        if (await fn(seq++)) done++;
        else failed++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  console.log(`${mode}: ${done} requests, ${failed} failed, ${((cpu.user + cpu.system) / done).toFixed(1)} µs CPU per request`);
}

for (const mode of modes) await run(mode, 1); // warm-up
// PROFILE=<file>: a CPU profile of the measured part only (after the warm-up, without module loading).
const session = process.env.PROFILE ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
for (let i = 0; i < 2; i++) for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) await run(mode, seconds);
if (session) writeFileSync(process.env.PROFILE!, JSON.stringify((await session.post('Profiler.stop')).profile));
await Promise.allSettled([http.close(), plainAgent.close()]);
await integrator.stop();
