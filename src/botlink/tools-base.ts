/**
 * {tools_base}, derived from {endpoint_url} (protocol §4.2): "when the URL ends in /channel, replace that final segment
 * with /tools; otherwise append /tools to the URL". The spec leaves the edges open; the choices made here:
 *
 * - Only the whole final path segment counts: `/mychannel` is not `/channel` (the spec says "that final segment").
 * - The match is case-sensitive, as URL paths are (RFC 3986 §6.2.2.1): `/CHANNEL` → `/CHANNEL/tools`.
 * - One trailing slash is not a segment of its own: `/channel/` ends in the segment channel → `/tools`, and `/bot/`
 *   → `/bot/tools` (no double slash).
 * - Percent-encoded paths are compared as written: `/%63hannel` is not `/channel`.
 * - The query string belongs to the integrator's URL (it may carry a token its gateway needs), so it stays on the
 *   tools base, and a path under the tools base is inserted before it: see {@link toolsUrl}.
 * - A fragment is never sent over HTTP; it is dropped.
 */
import { AppError } from '../errors.ts';

/** The final segment that is replaced, and its replacement (protocol §4.2). */
const CHANNEL_SEGMENT = '/channel';
const TOOLS_SEGMENT = '/tools';

function parse(endpointUrl: string): URL {
  try {
    return new URL(endpointUrl);
  } catch {
    throw new AppError('invalid_url', 'The endpoint URL is not a valid absolute URL.');
  }
}

/** The tools base as a URL object, so callers can add a path before the query. */
function toolsBaseUrl(endpointUrl: string): URL {
  const url = parse(endpointUrl);
  url.hash = '';
  const path = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  url.pathname = path.endsWith(CHANNEL_SEGMENT)
    ? path.slice(0, -CHANNEL_SEGMENT.length) + TOOLS_SEGMENT
    : path + TOOLS_SEGMENT;
  return url;
}

/** {tools_base} for an endpoint URL (protocol §4.2), with the endpoint's query string kept and its fragment dropped. */
export function toolsBase(endpointUrl: string): string {
  return toolsBaseUrl(endpointUrl).href;
}

/**
 * The URL of a tools request: `''` for the tool call (POST {tools_base}, protocol §4.4), `'/manifest'` for the manifest
 * (GET {tools_base}/manifest, protocol §4.3). The suffix goes into the path, before the query string:
 * `https://x.test/channel?token=abc` → `https://x.test/tools/manifest?token=abc`.
 */
export function toolsUrl(endpointUrl: string, suffix: '' | '/manifest'): string {
  const url = toolsBaseUrl(endpointUrl);
  url.pathname += suffix;
  return url.href;
}
