/**
 * Express middleware for an integrator's endpoints: reads the raw body itself, verifies it (./verify.ts), answers
 * 401 with no content when it is not genuine (protocol §5.5.4), and otherwise puts the parsed JSON on `req.body`.
 */
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { MAX_RESPONSE_BYTES, SENT_AT_HEADER, SIGNATURE_HEADER } from '../limits.ts';
import { assertKey, checkChannelRequest, verifyToolsRequest } from './verify.ts';
import type { VerifyFailure, VerifyOptions } from './verify.ts';

/**
 * The largest request body read by default. The service's requests are far smaller (a message is at most 2000
 * characters, protocol §2.1); 64 KB is the size the spec allows the other way (protocol §2.2, §8), doubled as headroom so a
 * future field never trips a receiver.
 */
export const RECEIVER_MAX_BODY_BYTES = 2 * MAX_RESPONSE_BYTES;

/** Why the middleware refused a request: a failed verification, or a body over `maxBodyBytes` (answered 413). */
export type RejectReason = VerifyFailure | 'body_too_large';

export interface ReceiverOptions extends VerifyOptions {
  /** Bodies larger than this are refused with 413 before they are verified; default {@link RECEIVER_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Called for every refused request, for your logs (the reason is safe to log; the body is not verified). */
  onReject?: (reason: RejectReason, req: Request) => void;
}

const TOO_LARGE = Symbol('too large');

/** A header as one string; a repeated header is not a valid signature or time. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

/** The body's bytes exactly as received, or TOO_LARGE once more than `limit` bytes arrived. */
function readRawBody(req: Request, limit: number): Promise<Buffer | typeof TOO_LARGE> {
  // express.raw() may have read it already: then its Buffer is the raw body.
  if (Buffer.isBuffer(req.body)) return Promise.resolve(req.body.length > limit ? TOO_LARGE : req.body);
  if (req.readableEnded) {
    return Promise.reject(
      new Error(
        'The Bot Link receiver needs the raw request body to check its signature, but a body parser (express.json()?) ' +
          'has read it already: mount channelReceiver/toolsReceiver before any body parser on these routes.',
      ),
    );
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Keep reading into nothing so the 413 can be delivered; the connection is closed after it.
        req.resume();
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** protocol §5.5.4: 401 with no content; nothing that tells a prober which check failed. */
function refuse(res: Response, status: 401 | 400 | 413): void {
  if (status === 413) res.set('Connection', 'close');
  res.status(status).end();
}

function receiver(
  key: string,
  options: ReceiverOptions | undefined,
  verify: (req: Request, raw: Buffer) => { ok: true; body: unknown } | { ok: false; reason: RejectReason; status: 400 | 401 },
): RequestHandler {
  assertKey(key);
  const limit = options?.maxBodyBytes ?? RECEIVER_MAX_BODY_BYTES;
  return (req, res, next) => {
    readRawBody(req, limit).then(
      (raw) => {
        if (raw === TOO_LARGE) {
          options?.onReject?.('body_too_large', req);
          refuse(res, 413);
          return;
        }
        const result = verify(req, raw);
        if (!result.ok) {
          options?.onReject?.(result.reason, req);
          refuse(res, result.status);
          return;
        }
        req.body = result.body;
        next();
      },
      (err: unknown) => next(err),
    );
  };
}

/**
 * For POST {endpoint_url}: verifies the signature over the raw body and the sent_at inside it (protocol §5.4, §5.5). On
 * success `req.body` is the channel request (see ChannelRequestBody) and the next handler runs.
 *
 * ```ts
 * app.post('/botlink/channel', channelReceiver(process.env.BOTLINK_KEY!), (req, res) => { … });
 * ```
 */
export function channelReceiver(key: string, options?: ReceiverOptions): RequestHandler {
  return receiver(key, options, (req, raw) => {
    const result = checkChannelRequest(key, raw, header(req, SIGNATURE_HEADER), options);
    return result.ok ? { ok: true, body: result.body } : { ...result, status: 401 };
  });
}

/**
 * For GET {tools_base}/manifest and POST {tools_base}: verifies X-Service-Sent-At and the signature over
 * `sent_at + '.' + raw body` (protocol §5.4, §5.5). On success `req.body` is the tool call (see ToolCallRequestBody) for
 * a POST, and undefined for the manifest GET (its body is empty). A genuine POST whose body is not JSON gets 400.
 */
export function toolsReceiver(key: string, options?: ReceiverOptions): RequestHandler {
  return receiver(key, options, (req, raw) => {
    const result = verifyToolsRequest(key, raw, header(req, SENT_AT_HEADER), header(req, SIGNATURE_HEADER), options);
    if (!result.ok) return { ...result, status: 401 };
    if (raw.length === 0) return { ok: true, body: undefined };
    try {
      return { ok: true, body: JSON.parse(raw.toString('utf8')) as unknown };
    } catch {
      return { ok: false, reason: 'invalid_json', status: 400 };
    }
  });
}
