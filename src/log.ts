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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' }, base: { service: 'botlink' } }, destination);
}
