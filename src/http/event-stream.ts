/**
 * One Server-Sent Events stream for a signed-in user (the session's and the inbox's live views): registered with the
 * stream guard before the 200 (so a user over their limit gets a plain 429), ended with an `end` event when the token
 * is revoked or expires, a comment line every SSE_HEARTBEAT_MS, and everything released when either side closes.
 */
import type { Request, Response } from 'express';
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import type { StreamGuard } from '../auth/stream-guard.ts';

/** SSE comment lines keep proxies from closing a quiet stream. */
export const SSE_HEARTBEAT_MS = 15_000;

export type SendEvent = (type: string, data: unknown) => void;

/**
 * Serves the stream until the client or the server closes it. `start` runs once the stream is open: it sends what the
 * client needs first and subscribes, returning the unsubscribe.
 */
export async function serveEventStream(
  req: Request,
  res: Response,
  principal: Principal,
  streams: StreamGuard,
  start: (send: SendEvent) => () => void,
): Promise<void> {
  const send: SendEvent = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  const release = streams.open({ tokenId: principal.tokenId, userId: principal.userId, workspaceId: principal.workspaceId }, () => {
    send('end', { reason: 'token_revoked' });
    res.end();
  });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  const unsubscribe = start(send);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), SSE_HEARTBEAT_MS);
  await new Promise<void>((resolve) => {
    req.on('close', resolve);
    res.on('close', resolve);
  });
  clearInterval(heartbeat);
  unsubscribe();
  release();
}
