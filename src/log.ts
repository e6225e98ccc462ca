/**
 * pino JSON logs. Keys, tokens, secrets and message bodies never reach a log line: the paths below are redacted
 * wherever they appear, and the HTTP logger records the path without its query string (a WhatsApp verify request
 * carries its token there).
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export const redactPaths = [
  'req.headers.authorization',
  'req.headers["x-widget-key"]',
  'req.headers["x-sync-key"]',
  'req.headers["x-twilio-signature"]',
  'req.headers["x-hub-signature-256"]',
  'req.headers["x-service-signature"]',
  'req.headers.cookie',
  'key',
  'token',
  'secret',
  'access_token',
  'password',
  '*.key',
  '*.token',
  '*.secret',
  '*.access_token',
  '*.password',
  '*.masterKey',
  '*.adminToken',
];

/**
 * A database error's `detail` (and `where`, `hint`, `internalQuery`) quotes the row's values: "Key (email)=(…) already
 * exists" would put a customer's or a user's address in the log. The code, the constraint and the table stay.
 */
const DATABASE_ERROR_VALUES = ['detail', 'where', 'hint', 'internalQuery'] as const;

export function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  for (const field of DATABASE_ERROR_VALUES) if (field in serialized) serialized[field] = '[redacted]';
  return serialized;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: redactPaths, censor: '[redacted]' }, base: { service: 'botlink' }, serializers: { err: serializeError } },
    destination,
  );
}
