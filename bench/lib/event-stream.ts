/**
 * A Server-Sent Events client for the load generators: the dashboard's side of `GET /v1/inbox/events` (and any other
 * stream of ours), read with undici as a browser's EventSource reads it. Each event is handed over with the wall-clock
 * time it was parsed at (`performance.timeOrigin + performance.now()`, the clock the engines' timestamps are on: one
 * machine), so a latency from an engine's timestamp to its arrival here is measured on one clock.
 */
import { request, type Dispatcher } from 'undici';

export const wallNow = (): number => performance.timeOrigin + performance.now();

export interface EventStream {
  /** Settles when the stream ends: `null` when closed by `close()`, else why it ended (the server closed it, an error). */
  ended: Promise<string | null>;
  close(): void;
}

/**
 * Opens the stream and resolves once its headers arrived with 200 (anything else rejects, with the answer's start);
 * then reads in the background, calling `onEvent(type, data, at)` for each event with data.
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string>,
  onEvent: (type: string, data: string, at: number) => void,
  dispatcher?: Dispatcher,
): Promise<EventStream> {
  const abort = new AbortController();
  const res = await request(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal, ...(dispatcher ? { dispatcher } : {}) });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`${url}: ${res.statusCode} ${text.slice(0, 200)}`);
  }
  let closing = false;
  const ended = (async (): Promise<string | null> => {
    let buffer = '';
    let type = 'message';
    let data = '';
    try {
      for await (const chunk of res.body) {
        const at = wallNow();
        buffer += (chunk as Buffer).toString('utf8');
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (data !== '') onEvent(type, data, at);
            type = 'message';
            data = '';
          } else if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
        }
      }
      return closing ? null : 'the server ended the stream';
    } catch (err) {
      return closing ? null : String(err);
    }
  })();
  return {
    ended,
    close() {
      closing = true;
      abort.abort();
    },
  };
}
