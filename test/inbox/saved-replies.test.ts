/**
 * Saved replies (docs/interfaces.md, "The team's tools"): every role reads and adds them; an agent changes and deletes
 * only their own, owners and admins any; a shortcut is one per workspace whatever its capitals (409); a shortcut of
 * other characters, an empty or too long text, or an unknown placeholder is a 422; placeholders are filled by the
 * same rules the reply box follows. "Insert from knowledge" searches the knowledge base for every role.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SAVED_REPLY_CHARS } from '../../src/inbox/limits.ts';
import { fillPlaceholders, unknownPlaceholders } from '../../src/inbox/saved-replies.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describe('placeholders', () => {
  it('fills the customer\'s and the agent\'s name and the customer\'s email, spaces inside the braces allowed', () => {
    expect(fillPlaceholders('Hi {{customer.name}}, this is {{ agent.name }}. We write to {{customer.email}}.', { 'customer.name': 'Ada', 'agent.name': 'Sam', 'customer.email': 'ada@example.com' }))
      .toBe('Hi Ada, this is Sam. We write to ada@example.com.');
  });

  it('a value nobody knows leaves nothing, and no space before the comma it leaves', () => {
    expect(fillPlaceholders('Hi {{customer.name}}, thanks for waiting.', { 'agent.name': 'Sam' })).toBe('Hi, thanks for waiting.');
  });

  it('names the unknown ones', () => {
    expect(unknownPlaceholders('Hi {{customer.name}} {{order.id}} {{ agent.phone }}')).toEqual(['order.id', 'agent.phone']);
    expect(unknownPlaceholders('Hi {{customer.name}}')).toEqual([]);
  });
});

describeEachDatabase('saved replies', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service);
    other = await seedWorkspace(service, 'Other');
  });
  afterAll(async () => {
    await service.stop();
  });

  it('an agent adds one, every role reads it, another workspace does not', async () => {
    const added = await api('POST', '/v1/saved-replies', ws.agent, { shortcut: '/warranty', text: 'Hi {{customer.name}}, every bike has a two-year warranty.' });
    expect(added.status).toBe(201);
    expect(added.body.saved_reply).toMatchObject({ id: expect.any(String), shortcut: 'warranty', text: 'Hi {{customer.name}}, every bike has a two-year warranty.', created_by: ws.agentId });
    for (const token of [ws.owner, ws.admin, ws.agent]) {
      const list = await api('GET', '/v1/saved-replies', token);
      expect(list.status).toBe(200);
      expect(list.body.saved_replies.map((r: { shortcut: string }) => r.shortcut)).toContain('warranty');
    }
    expect((await api('GET', '/v1/saved-replies', other.owner)).body.saved_replies).toEqual([]);
    expect((await api('DELETE', `/v1/saved-replies/${added.body.saved_reply.id}`, other.owner)).status).toBe(404);
    expect((await service.api('GET', '/v1/saved-replies')).status).toBe(401);
  });

  it('a shortcut is one per workspace whatever its capitals: 409; another workspace may have it', async () => {
    expect((await api('POST', '/v1/saved-replies', ws.admin, { shortcut: 'thanks', text: 'Thank you!' })).status).toBe(201);
    const again = await api('POST', '/v1/saved-replies', ws.agent, { shortcut: 'Thanks', text: 'Thanks a lot.' });
    expect([again.status, again.body.error.code]).toEqual([409, 'conflict']);
    expect((await api('POST', '/v1/saved-replies', other.agent, { shortcut: 'thanks', text: 'Cheers.' })).status).toBe(201);
  });

  it('a wrong shortcut, an empty or too long text and an unknown placeholder are 422 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ shortcut: 'two words', text: 'Hello' }, 'shortcut'],
      [{ shortcut: '', text: 'Hello' }, 'shortcut'],
      [{ shortcut: 'x'.repeat(33), text: 'Hello' }, 'shortcut'],
      [{ shortcut: 'empty', text: '   ' }, 'text'],
      [{ shortcut: 'long', text: 'x'.repeat(MAX_SAVED_REPLY_CHARS + 1) }, 'text'],
      [{ shortcut: 'order', text: 'Your order {{order.id}} ships today.' }, 'text'],
    ];
    for (const [body, field] of cases) {
      const res = await api('POST', '/v1/saved-replies', ws.agent, body);
      expect([res.status, res.body.error.code], JSON.stringify(body)).toEqual([422, 'unprocessable']);
      expect(res.body.error.details[0].field).toBe(field);
    }
    expect((await api('POST', '/v1/saved-replies', ws.agent, { shortcut: 'max', text: 'x'.repeat(MAX_SAVED_REPLY_CHARS) })).status).toBe(201);
    expect((await api('POST', '/v1/saved-replies', ws.agent, { shortcut: 'x' })).status).toBe(400);
  });

  it('an agent changes and deletes only the replies they wrote; owners and admins any', async () => {
    const mine = (await api('POST', '/v1/saved-replies', ws.agent, { shortcut: 'hours', text: 'We are open 9 to 5.' })).body.saved_reply;
    const admins = (await api('POST', '/v1/saved-replies', ws.admin, { shortcut: 'returns', text: 'Returns are free within 30 days.' })).body.saved_reply;
    const changed = await api('PUT', `/v1/saved-replies/${mine.id}`, ws.agent, { shortcut: 'hours', text: 'We are open 9 to 6, {{customer.name}}.' });
    expect(changed.status).toBe(200);
    expect(changed.body.saved_reply.text).toBe('We are open 9 to 6, {{customer.name}}.');
    const refused = await api('PUT', `/v1/saved-replies/${admins.id}`, ws.agent, { shortcut: 'returns', text: 'No returns.' });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    expect((await api('DELETE', `/v1/saved-replies/${admins.id}`, ws.agent)).status).toBe(403);
    // Renaming onto another's shortcut is the same conflict.
    expect((await api('PUT', `/v1/saved-replies/${mine.id}`, ws.owner, { shortcut: 'RETURNS', text: 'x' })).status).toBe(409);
    expect((await api('PUT', `/v1/saved-replies/${admins.id}`, ws.owner, { shortcut: 'returns', text: 'Returns are free within 60 days.' })).status).toBe(200);
    expect((await api('DELETE', `/v1/saved-replies/${mine.id}`, ws.admin)).status).toBe(204);
    expect((await api('DELETE', `/v1/saved-replies/${mine.id}`, ws.admin)).status).toBe(404);
    const shortcuts = (await api('GET', '/v1/saved-replies', ws.agent)).body.saved_replies.map((r: { shortcut: string }) => r.shortcut);
    expect(shortcuts).not.toContain('hours');
    expect(shortcuts).toContain('returns');
  });

  it('Insert from knowledge: every role searches the knowledge base and gets whole passages; another workspace\'s are not found', async () => {
    const text = 'Every bike we sell has a two-year warranty on the frame and one year on the parts.';
    expect((await api('POST', '/v1/knowledge/entries', ws.owner, { type: 'page', title: 'Warranty', text })).status).toBe(201);
    for (const [token, words] of [[ws.agent, 'warranty frame'], [ws.admin, 'Warranty']] as const) {
      const found = await api('GET', `/v1/knowledge/search?q=${encodeURIComponent(words)}`, token);
      expect(found.status).toBe(200);
      expect(found.body.passages[0]).toMatchObject({ id: expect.any(String), title: 'Warranty', text: expect.stringContaining('two-year warranty') });
    }
    expect((await api('GET', '/v1/knowledge/search?q=warranty', other.agent)).body.passages).toEqual([]);
    expect((await api('GET', '/v1/knowledge/search?q=%20%3F', ws.agent)).body.passages).toEqual([]);
    expect((await api('GET', `/v1/knowledge/search?q=${'x'.repeat(501)}`, ws.agent)).status).toBe(400);
  });
});
