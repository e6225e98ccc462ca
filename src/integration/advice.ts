/**
 * What went wrong with the integrator's endpoint, said to a shop owner: one sentence of what happened and one of what
 * to do (docs/integrators.md, "What the dashboard tells you"). The engine's own words (`connect ECONNREFUSED`) stay in
 * `message` and the logs, for the developer.
 */
import type { HealthOutcomeKind } from '../botlink/endpoint-health.ts';
import { CHANNEL_TIMEOUT_MS, PHONE_CHANNEL_TIMEOUT_MS } from '../limits.ts';

const seconds = (ms: number) => `${ms / 1000} seconds`;

/** A test's or a turn's no-answer reason (src/botlink/channel-response.ts NoAnswerReason), in words. */
export function adviceForReason(reason: string, httpStatus: number | null): string {
  switch (reason) {
    case 'answer':
      return 'Your system answered; customers will get its replies.';
    case 'timeout':
      return `Your system did not answer in time (${seconds(CHANNEL_TIMEOUT_MS)}; ${seconds(PHONE_CHANNEL_TIMEOUT_MS)} on the phone). Check that it is running, and make it answer within 3 seconds.`;
    case 'connection':
      return 'Botlink could not connect to your system at this address. Check that it is running and reachable from the internet at this address and port.';
    case 'tls':
      return 'Botlink could not set up a secure (https) connection to your system. Its certificate must be valid and issued for this host name, by a public authority.';
    case 'status':
      if (httpStatus === 401 || httpStatus === 403) return `Your system refused the request (HTTP ${httpStatus}). Most often it checks the signature with a different key: give it the key shown when you saved, or make a new key and give it that one.`;
      if (httpStatus === 404) return 'Your system answered "not found" (HTTP 404): the address is probably not quite right. Check the path of the endpoint URL.';
      if (httpStatus !== null && httpStatus >= 500) return `Your system had an error (HTTP ${httpStatus}). Its developer finds the cause in its logs.`;
      return `Your system answered with HTTP ${httpStatus ?? 'an error'} instead of a reply. It should answer 200 with a JSON reply.`;
    case 'invalid_json':
    case 'invalid_response':
    case 'empty_reply':
    case 'cut_off':
      return 'Your system answered, but not with a reply Botlink can use. The problems below say what to change; the built-in AI answers customers meanwhile.';
    case 'invalid_url':
    case 'refused_address':
      return 'This address cannot be used: Botlink only calls public https:// addresses.';
    case 'not_configured':
      return 'No endpoint is saved yet. Enter its address and press Test, or save it first.';
    default:
      return 'Your system did not give a usable answer; the built-in AI answers customers meanwhile.';
  }
}

/** The latest failure kind of the endpoint's health (src/botlink/endpoint-health.ts), in words. */
export function adviceForHealth(kind: HealthOutcomeKind | null): string | null {
  switch (kind) {
    case 'timeout':
      return adviceForReason('timeout', null);
    case 'connection':
      return adviceForReason('connection', null);
    case 'status_5xx':
      return 'Your system answered with server errors (HTTP 5xx). Its developer finds the cause in its logs.';
    case 'invalid':
      return 'Your system answered, but not with a reply Botlink can use. Press Test below to see what to change.';
    default:
      return null;
  }
}

/** Why an endpoint URL is refused, with what to do; the loopback and private cases name OUTBOUND_ALLOW (docs/operations.md). */
export function refusedUrlAdvice(reason: string): string {
  const local = /loopback|private|refused address|link-local|reserved|not a global|unique local|shared address/i.test(reason);
  if (!local) return `This address cannot be used: ${reason}.`;
  return `This address cannot be used: ${reason}. Botlink calls only public addresses, so that customers' messages never reach a private network. ` +
    'To try an endpoint on this machine while developing, the person who runs Botlink lists that address or name in OUTBOUND_ALLOW (README, Settings); never in production.';
}
