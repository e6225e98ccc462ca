/**
 * Behind a load balancer (docs/operations.md, "Behind a load balancer"): with TRUST_PROXY naming the balancer, a request
 * it forwards counts as coming from the client its X-Forwarded-For names, for the web chat's per-address limit and the
 * audit log; a request from anywhere else keeps its peer address whatever header it sends, and without TRUST_PROXY
 * the header is ignored altogether. Requests leave from distinct loopback addresses (127.0.0.2 is the balancer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { postFrom, seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const BALANCER = '127.0.0.2';
const ELSEWHERE = '127.0.0.3';
const BURST = 2;

async function shop(service: TestService) {
  const ws = await seedWorkspace(service, `Proxied${Date.now()}`);
  const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
  expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
  return { ...ws, widgetKey };
}

describeEachDatabase('TRUST_PROXY', (get) => {
  let trusting: TestService;
  let plain: TestService;

  beforeAll(async () => {
    const limits = { webchat: { rateLimit: { burst: BURST, windowMs: 60_000 } } };
    trusting = await startTestService(get(), { TRUST_PROXY: `${BALANCER}/32` }, limits);
    plain = await startTestService(get(), {}, limits);
  });
  afterAll(async () => {
    await trusting?.stop();
    await plain?.stop();
  });

  function chatFrom(service: TestService, peer: string, widgetKey: string, client: string) {
    return postFrom(service, peer, '/v1/webchat/conversations', { visitor_message: 'Hello', page_url: `${SHOP}/` }, {
      'x-widget-key': widgetKey,
      origin: SHOP,
      'x-forwarded-for': client,
    });
  }

  describe('the web chat limit per address', () => {
    it('through the balancer, each visitor has a limit of their own', async () => {
      const { widgetKey } = await shop(trusting);
      for (let i = 0; i < BURST; i++) expect((await chatFrom(trusting, BALANCER, widgetKey, '203.0.113.7')).status).toBe(201);
      expect((await chatFrom(trusting, BALANCER, widgetKey, '203.0.113.7')).status).toBe(429);
      // Another visitor behind the same balancer is not turned away for the first one's requests.
      expect((await chatFrom(trusting, BALANCER, widgetKey, '203.0.113.8')).status).toBe(201);
    });

    it('from a peer that is not the balancer, a forged X-Forwarded-For escapes nothing', async () => {
      const { widgetKey } = await shop(trusting);
      for (let i = 0; i < BURST; i++) expect((await chatFrom(trusting, ELSEWHERE, widgetKey, `198.51.100.${i + 1}`)).status).toBe(201);
      expect((await chatFrom(trusting, ELSEWHERE, widgetKey, '198.51.100.99')).status).toBe(429);
    });

    it('without TRUST_PROXY, the header is ignored: the balancer itself is the one address', async () => {
      const { widgetKey } = await shop(plain);
      for (let i = 0; i < BURST; i++) expect((await chatFrom(plain, BALANCER, widgetKey, `203.0.113.${i + 1}`)).status).toBe(201);
      expect((await chatFrom(plain, BALANCER, widgetKey, '203.0.113.99')).status).toBe(429);
    });
  });

  describe('the audit log', () => {
    async function lastAuditIp(service: TestService, peer: string, client: string): Promise<string | null> {
      const ws = await seedWorkspace(service, `Audited${Date.now()}`);
      const made = await postFrom(service, peer, '/v1/tokens', {}, { authorization: `Bearer ${ws.owner}`, 'x-forwarded-for': client });
      expect(made.status).toBe(201);
      const audit = await service.api('GET', '/v1/audit?limit=1', { token: ws.owner });
      expect(audit.body.entries[0].action).toBe('token_created');
      return audit.body.entries[0].ip as string | null;
    }

    it("records the client's address for a request the balancer forwarded", async () => {
      expect(await lastAuditIp(trusting, BALANCER, '203.0.113.7')).toBe('203.0.113.7');
    });

    it("records the peer's own address for anyone else, and everywhere without TRUST_PROXY", async () => {
      expect(await lastAuditIp(trusting, ELSEWHERE, '203.0.113.7')).toContain(ELSEWHERE);
      expect(await lastAuditIp(plain, BALANCER, '203.0.113.7')).toContain(BALANCER);
    });
  });
});
