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
 * What customers say and who they are (README, Settings: `LOG_CUSTOMER_DATA`; docs/privacy.md, "Logs"): message text,
 * phone numbers, emails and names. No line at info or above carries them by design; these fields, where a line at any
 * level has them, are redacted too unless LOG_CUSTOMER_DATA is on (for debugging, with LOG_LEVEL=debug).
 */
export const CUSTOMER_FIELDS = [
  'text',
  'voicePrompt',
  'customerMessage',
  'customer_message',
  'reply',
  'phone',
  'email',
  'customerPhone',
  'customer_phone',
  'customer_email',
  'customer_name',
  'waId',
  'wa_id',
  'visitor_name',
  'visitor_email',
  'visitor_phone',
  'profile_name',
];
const customerPaths = CUSTOMER_FIELDS.flatMap((field) => [field, `*.${field}`]);

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

/** `customerData`: LOG_CUSTOMER_DATA, for debugging only; off (the default) redacts {@link CUSTOMER_FIELDS}. */
export function createLogger(level: string, destination?: DestinationStream, options: { customerData?: boolean } = {}): Logger {
  const paths = options.customerData ? redactPaths : [...redactPaths, ...customerPaths];
  return pino({ level, redact: { paths, censor: '[redacted]' }, base: { service: 'botlink' }, serializers: { err: serializeError } }, destination);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Keys every line carries, which a person reading a terminal does not need repeated. */
const QUIET_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg']);

/**
 * Logs for a person at a terminal (README, Settings: `LOG_LEVEL`): one short line per entry, `12:04:31 info  botlink
 * is ready (port=8080, database=pglite)`, from the same redacted pino line (so nothing redacted comes back). Piped to
 * a file or a collector, `npm start` keeps writing pino's JSON.
 */
export function terminalDestination(out: { write(text: string): unknown } = process.stdout): DestinationStream {
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const at = typeof entry.time === 'number' ? new Date(entry.time).toTimeString().slice(0, 8) : '';
      const level = (LEVEL_NAMES[Number(entry.level)] ?? String(entry.level)).padEnd(5);
      const rest = Object.entries(entry)
        .filter(([k]) => !QUIET_KEYS.has(k))
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
      out.write(`${at} ${level} ${String(entry.msg ?? '')}${rest.length ? ` (${rest.join(', ')})` : ''}\n`);
    },
  };
}
