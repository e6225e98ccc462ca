/**
 * The load generator of bench/auth-flood.bench.ts, in a process of its own: POSTs unauthenticated 1 MB nested JSON
 * bodies to one authenticated route as fast as FLOOD_CONCURRENCY connections allow, until its parent disconnects, and
 * reports how many it sent and what came back.
 */
import { Agent, request } from 'undici';

const url = process.env.FLOOD_URL!;
const concurrency = Number(process.env.FLOOD_CONCURRENCY ?? '16');
const depth = 500;
const pad = 'x'.repeat(1024 * 1024 - 1024 - depth * 8);
const body = '{"a":'.repeat(depth) + JSON.stringify({ pad }) + '}'.repeat(depth);
const agent = new Agent({ connections: concurrency, pipelining: 1 });

let sent = 0;
const statuses: Record<string, number> = {};
let running = true;
process.on('disconnect', () => {
  running = false;
});
process.on('message', (message: { type: string }) => {
  if (message.type === 'report') process.send!({ type: 'report', sent, statuses });
});

async function worker(): Promise<void> {
  while (running) {
    try {
      const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
      await res.body.dump();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    } catch {
      statuses.error = (statuses.error ?? 0) + 1;
    }
    sent++;
  }
}

process.send!({ type: 'ready' });
await Promise.all(Array.from({ length: concurrency }, () => worker()));
await agent.close();
