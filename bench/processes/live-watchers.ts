/**
 * The dashboard's side of the live-events benchmark (bench/live-events.bench.ts), in a process of its own: session
 * streams (GET /v1/sessions/{id}/events, Server-Sent Events) opened on one engine for calls that another engine
 * handles. Each `turn_started` event carries the time its engine published it (`at`) and the prompt's reference
 * (`ref p<call>x<n>`); the watcher notes when it arrived, so the time from one engine's publishing to the other
 * engine's stream is measured on this machine's one clock, and every turn of a watched call is known by its id.
 *
 * IPC: → {type:'open', failed}; ← {type:'record'}; ← {type:'report'} → {type:'report', …}. Exits when the parent goes.
 */
import { request } from 'undici';

export interface WatchersConfig {
  streams: { url: string; token: string; sessionId: string; call: number }[];
}

export interface WatchersReport {
  type: 'report';
  /** Published on one engine → on the other's stream, ms, for the events that arrived while recording. */
  latenciesMs: number[];
  /** `<call>:<n>` of every turn_started seen while recording (or a little before: the parent decides). */
  seen: string[];
  /** Streams that ended or failed while open. */
  broken: string[];
}

const REF = /ref p(\d+)x(\d+)\)/;
const config = JSON.parse(process.env.LIVE_WATCHERS_CONFIG ?? '{"streams":[]}') as WatchersConfig;
const wallNow = () => performance.timeOrigin + performance.now();
let recording = false;
const latenciesMs: number[] = [];
const seen: string[] = [];
const broken: string[] = [];
let closing = false;

function onEvent(type: string, data: string): void {
  if (type !== 'turn_started') return;
  const event = JSON.parse(data) as { at: string; message: string };
  const ms = wallNow() - Date.parse(event.at);
  const ref = REF.exec(event.message);
  if (!recording) return;
  latenciesMs.push(ms);
  if (ref) seen.push(`${ref[1]}:${ref[2]}`);
}

async function watch(stream: WatchersConfig['streams'][number]): Promise<void> {
  const res = await request(`${stream.url}/v1/sessions/${stream.sessionId}/events`, { headers: { authorization: `Bearer ${stream.token}`, accept: 'text/event-stream' } });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`stream of call ${stream.call}: ${res.statusCode} ${text.slice(0, 200)}`);
  }
  // Reading goes on in the background; the stream counts as open once its headers arrived.
  void (async () => {
    let buffer = '';
    let type = 'message';
    let data = '';
    try {
      for await (const chunk of res.body) {
        buffer += (chunk as Buffer).toString('utf8');
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (data !== '') onEvent(type, data);
            type = 'message';
            data = '';
          } else if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
        }
      }
      if (!closing) broken.push(`stream of call ${stream.call} ended`);
    } catch (err) {
      if (!closing) broken.push(`stream of call ${stream.call}: ${String(err)}`);
    }
  })();
}

const results = await Promise.allSettled(config.streams.map(watch));
const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
process.on('message', (message: { type: string }) => {
  if (message.type === 'record') recording = true;
  if (message.type === 'report') {
    recording = false;
    process.send!({ type: 'report', latenciesMs, seen, broken } satisfies WatchersReport);
  }
});
process.on('disconnect', () => {
  closing = true;
  process.exit(0);
});
process.send!({ type: 'open', failed });
