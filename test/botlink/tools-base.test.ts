import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { toolsBase, toolsUrl } from '../../src/botlink/tools-base.ts';

describe('toolsBase: {tools_base} from {endpoint_url} (protocol §4.2)', () => {
  it.each([
    // A final segment /channel is replaced by /tools.
    ['https://x.test/channel', 'https://x.test/tools'],
    ['https://x.test/api/channel', 'https://x.test/api/tools'],
    // One trailing slash is not a segment: /channel/ ends in the segment channel.
    ['https://x.test/channel/', 'https://x.test/tools'],
    ['https://x.test/api/channel/', 'https://x.test/api/tools'],
    // Otherwise /tools is appended, without a double slash.
    ['https://x.test/', 'https://x.test/tools'],
    ['https://x.test', 'https://x.test/tools'],
    ['https://x.test/bot', 'https://x.test/bot/tools'],
    ['https://x.test/bot/', 'https://x.test/bot/tools'],
    // Only the whole final segment counts.
    ['https://x.test/mychannel', 'https://x.test/mychannel/tools'],
    ['https://x.test/channels', 'https://x.test/channels/tools'],
    ['https://x.test/channel/v2', 'https://x.test/channel/v2/tools'],
    ['https://x.test/channel.php', 'https://x.test/channel.php/tools'],
    // Case-sensitive, as URL paths are.
    ['https://x.test/CHANNEL', 'https://x.test/CHANNEL/tools'],
    ['https://x.test/Channel', 'https://x.test/Channel/tools'],
    // Percent-encoded paths are compared as written.
    ['https://x.test/%63hannel', 'https://x.test/%63hannel/tools'],
    // The query stays, the fragment goes.
    ['https://x.test/channel?token=abc', 'https://x.test/tools?token=abc'],
    ['https://x.test/bot?token=abc&x=1', 'https://x.test/bot/tools?token=abc&x=1'],
    ['https://x.test/channel#section', 'https://x.test/tools'],
    ['https://x.test/channel?token=abc#section', 'https://x.test/tools?token=abc'],
    // Port and host are kept (the host as the URL standard writes it).
    ['https://X.Test:8443/hooks/channel', 'https://x.test:8443/hooks/tools'],
  ])('%s → %s', (endpointUrl, expected) => {
    expect(toolsBase(endpointUrl)).toBe(expected);
  });

  it('refuses a string that is not an absolute URL with invalid_url', () => {
    const thrown = (() => {
      try {
        toolsBase('x.test/channel');
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('invalid_url');
    expect((thrown as AppError).status).toBe(422);
  });
});

describe('toolsUrl: the manifest and tool call URLs under the tools base (protocol §4.3, §4.4)', () => {
  it.each<[string, '' | '/manifest', string]>([
    ['https://x.test/channel', '/manifest', 'https://x.test/tools/manifest'],
    ['https://x.test/channel', '', 'https://x.test/tools'],
    ['https://x.test/channel/', '/manifest', 'https://x.test/tools/manifest'],
    ['https://x.test', '/manifest', 'https://x.test/tools/manifest'],
    ['https://x.test/bot/', '/manifest', 'https://x.test/bot/tools/manifest'],
    // The path goes before the query, never after it.
    ['https://x.test/channel?token=abc', '/manifest', 'https://x.test/tools/manifest?token=abc'],
    ['https://x.test/channel?token=abc', '', 'https://x.test/tools?token=abc'],
    ['https://x.test/bot?token=abc#frag', '/manifest', 'https://x.test/bot/tools/manifest?token=abc'],
  ])('%s + %j → %s', (endpointUrl, suffix, expected) => {
    expect(toolsUrl(endpointUrl, suffix)).toBe(expected);
  });

  it('gives the tools base itself for the tool call', () => {
    const endpoint = 'https://x.test/api/channel?token=abc';
    expect(toolsUrl(endpoint, '')).toBe(toolsBase(endpoint));
  });
});
