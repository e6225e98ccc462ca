/**
 * `npm run demo` (docs/examples/demo/main.ts) runs this: the real service in this process on an embedded database in a
 * temporary DATA_DIR, the reference integrator (../order-desk.ts), a few synced knowledge pages, and scripted
 * customers on every channel, with a transcript. Everything listens on 127.0.0.1 only.
 *
 * Loopback is a private address, which Botlink refuses to call (docs/reliability.md); OUTBOUND_ALLOW=127.0.0.1/32
 * lifts that for the demo, as the README's tour does for development. The integrator, the Graph recorder and the
 * webhook receiver use the test certificate, trusted by this process only (./loopback.ts, trustDemoCa).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config.ts';
import { createLogger } from '../../../src/log.ts';
import { startService } from '../../../src/app/service.ts';
import { SHOP, startOrderDesk } from '../order-desk.ts';
import { trustDemoCa } from './loopback.ts';
import { playPhoneCall } from './phone-call.ts';
import { startScriptedModel } from './scripted-model.ts';
import { apiClient, Transcript } from './transcript.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { playWebsiteChat } from './website-chat.ts';
import { playWhatsappChat, startGraphRecorder } from './whatsapp-chat.ts';

export interface DemoOptions {
  /** The short form (the test suite's): fewer turns per channel, the same checks. */
  quick?: boolean;
  /** Where transcript lines go; default console.log. */
  log?: (line: string) => void;
  /** LLM_BASE_URL, LLM_API_KEY, LLM_MODEL: a real model instead of the scripted one; LOG_LEVEL (default error). */
  env?: NodeJS.ProcessEnv;
}

export interface DemoResult {
  /** Every channel answered, the barge-in cancelled a turn, the phone handoff happened, the lead webhook verified. */
  ok: boolean;
  /** What failed, one sentence each. */
  failures: string[];
  /** Every transcript line, as printed. */
  lines: string[];
  serviceUrl: string;
  dashboardUrl: string;
  /** The workspace owner's token, for "Sign in with a token". */
  ownerToken: string;
  inviteUrl: string | undefined;
  /** The sample shop page with the chat widget: {PUBLIC_URL}/widget/demo?key=<widget key>. */
  widgetDemoUrl: string;
  /** Stops the service and the demo's servers, and removes the temporary DATA_DIR. */
  stop(): Promise<void>;
}

const PHONE_NUMBER = '+31201234567';
const TRANSFER_NUMBER = '+31207654321';
const PHONE_NUMBER_ID = '106540352242922';
const SHOP_ORIGIN = 'https://shop.trailhead.example';

/** The pages the shop's CMS plugin would sync (PUT /v1/sync/pages/{external_id}). */
const PAGES = {
  shipping: { title: 'Shipping and delivery', body: 'We deliver in the Netherlands within one to two working days. We also ship to Belgium and Germany, in two to four working days. Shipping is free above 75 euro.' },
  returns: { title: 'Returns', body: 'You can return unworn items within 30 days for a full refund. Shoes and boots can be exchanged for another size free of charge.' },
  payment: { title: 'Payment', body: 'You can pay with iDEAL, credit card or PayPal. Business customers can pay by invoice.' },
};

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const env = options.env ?? process.env;
  const quick = options.quick ?? false;
  const cleanup: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  };

  try {
    trustDemoCa();
    const dataDir = mkdtempSync(join(tmpdir(), 'botlink-demo-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const model = env.LLM_BASE_URL ? null : await startScriptedModel();
    if (model) cleanup.push(() => model.close());
    const graph = await startGraphRecorder();
    cleanup.push(() => graph.close());

    const port = await freePort();
    const appSecret = randomBytes(24).toString('hex');
    const bridgeToken = randomBytes(24).toString('hex');
    const config = loadConfig({
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString('hex'),
      OUTBOUND_ALLOW: '127.0.0.1/32',
      BRIDGE_TOKEN: bridgeToken,
      WHATSAPP_APP_SECRET: appSecret,
      WHATSAPP_VERIFY_TOKEN: randomBytes(12).toString('hex'),
      WHATSAPP_GRAPH_URL: graph.graphUrl,
      ...(model ? { LLM_BASE_URL: model.baseUrl, LLM_MODEL: 'scripted-demo-model' } : { LLM_BASE_URL: env.LLM_BASE_URL, LLM_API_KEY: env.LLM_API_KEY, LLM_MODEL: env.LLM_MODEL }),
      LOG_LEVEL: env.LOG_LEVEL ?? 'error',
    });
    log(`[setup] starting Botlink on 127.0.0.1:${port}: the embedded database (PGlite) in ${dataDir}, its migrations…`);
    const starting = performance.now();
    const service = await startService({ config, logger: createLogger(config.logLevel), drainMs: 2_000, webhooks: { pollIntervalMs: 200 } });
    cleanup.push(() => service.stop());
    const created = await service.accounts.createWorkspace({ name: SHOP.name, ownerEmail: 'owner@trailhead.example' });
    const token = created.owner.token;
    const api = apiClient(service.url);
    const transcript = new Transcript(log, api, token);
    const must = async (what: string, call: Promise<{ status: number; body: unknown; text: string }>) => {
      const res = await call;
      if (res.status >= 300) throw new Error(`${what} failed: HTTP ${res.status} ${res.text}`);
      return res.body as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    };

    transcript.line('setup', `Botlink ready at ${service.url} in ${((performance.now() - starting) / 1000).toFixed(1)} s; workspace "${SHOP.name}"`);
    transcript.line('setup', model ? `AI: a scripted stand-in for an OpenAI-compatible model at ${model.baseUrl} (set LLM_BASE_URL for a real one)` : `AI: the model at ${env.LLM_BASE_URL}`);

    // The integrator: Botlink is given the endpoint and the key the order desk verifies with.
    const key = randomBytes(32).toString('base64url');
    const desk = await startOrderDesk({ key });
    cleanup.push(() => desk.close());
    await must('PUT /v1/integration', api('PUT', '/v1/integration', { token, body: { endpoint_url: desk.endpointUrl, key } }));
    const test = await must('POST /v1/integration/test', api('POST', '/v1/integration/test', { token, body: { message: 'Where is my order 1234? Postcode 9711 LM.', language: 'en' } }));
    transcript.line('setup', `integrator ${desk.endpointUrl}: test button → ${test.outcome}, HTTP ${test.http_status}, ${test.latency_ms} ms`);
    const tools = await must('POST /v1/integration/tools/test', api('POST', '/v1/integration/tools/test', { token }));
    transcript.line('setup', `tools manifest: ${(tools.tools as { name: string }[]).map((t) => t.name).join(', ')} (${(tools.problems as unknown[]).length} problems)`);

    // Knowledge: the shop's pages, through the content-sync API with a sync key.
    const syncKey = (await must('POST /v1/keys/sync', api('POST', '/v1/keys/sync', { token }))).key as string;
    for (const [id, page] of Object.entries(PAGES)) {
      await must(`PUT /v1/sync/pages/${id}`, api('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': syncKey }, body: { ...page, language: 'en' } }));
    }
    transcript.line('setup', `knowledge: ${Object.values(PAGES).map((p) => `"${p.title}"`).join(', ')} synced`);

    // Channels: a phone number with a transfer number and the team switch on; a WhatsApp number; the widget.
    await must('PUT /v1/phone', api('PUT', '/v1/phone', { token, body: { numbers: [PHONE_NUMBER], transfer_number: TRANSFER_NUMBER, greeting: `Welcome to ${SHOP.name}, how can I help?` } }));
    await must('PUT /v1/team', api('PUT', '/v1/team', { token, body: { available: true } }));
    await must('PUT /v1/whatsapp', api('PUT', '/v1/whatsapp', { token, body: { phone_number_id: PHONE_NUMBER_ID, access_token: `EAAG${randomBytes(16).toString('hex')}` } }));
    const widgetKey = (await must('GET /v1/keys/widget', api('GET', '/v1/keys/widget', { token }))).key as string;
    await must('PUT /v1/webchat', api('PUT', '/v1/webchat', { token, body: { allowed_origins: [SHOP_ORIGIN, service.url] } }));
    transcript.line('setup', `phone ${PHONE_NUMBER} (transfer to ${TRANSFER_NUMBER}, team available), WhatsApp ${PHONE_NUMBER_ID} (Graph API: recorder at ${graph.origin}), website chat for ${SHOP_ORIGIN}`);

    // Webhooks to the integrator's receiver, each with its whsec_ secret.
    const receiver = await startWebhookReceiver(transcript);
    cleanup.push(() => receiver.close());
    const events = ['new_chat', 'new_lead', 'escalation'];
    for (const event of events) {
      const hook = await must(`PUT /v1/webhooks/${event}`, api('PUT', `/v1/webhooks/${event}`, { token, body: { url: receiver.url(event) } }));
      receiver.setSecret(event, hook.secret as string);
    }
    transcript.line('setup', `webhooks ${events.join(', ')} → ${receiver.origin}/hooks/… (verified with standardwebhooks)`);
    log('');

    const failures: string[] = [];
    // A channel that breaks off is a failure of its own; the other channels still play.
    const play = async <T>(channel: string, run: () => Promise<T>, nothing: T): Promise<T> => {
      try {
        return await run();
      } catch (err) {
        failures.push(`The ${channel} customer broke off: ${err instanceof Error ? err.message : String(err)}`);
        return nothing;
      } finally {
        log('');
      }
    };
    const phone = await play('phone', () => playPhoneCall(transcript, api, { serviceUrl: service.url, bridgeToken, number: PHONE_NUMBER, quick }), { answered: false, bargeIn: false, handoff: false });
    const whatsapp = await play('WhatsApp', () => playWhatsappChat(transcript, { serviceUrl: service.url, appSecret, phoneNumberId: PHONE_NUMBER_ID, graph, quick }), { answered: false });
    const webchat = await play('website chat', () => playWebsiteChat(transcript, api, { widgetKey, shopOrigin: SHOP_ORIGIN, quick }), { answered: false, lead: false });
    const missing = await receiver.waitFor(events);

    if (!phone.answered) failures.push('The phone call was not answered.');
    if (!phone.bargeIn) failures.push('The barge-in did not cancel the pending turn.');
    if (!phone.handoff) failures.push('The phone call did not end in a human handoff put through to the transfer number.');
    if (!whatsapp.answered) failures.push('The WhatsApp message was not answered through the Graph API.');
    if (!webchat.answered) failures.push('The website chat was not answered.');
    if (!webchat.lead) failures.push('The lead was not saved.');
    if (missing.length > 0) failures.push(`These webhooks did not arrive: ${missing.join(', ')}.`);
    if (!receiver.received.some((r) => r.event === 'new_lead' && r.verified)) failures.push('No new_lead webhook verified.');
    for (const bad of receiver.received.filter((r) => !r.verified)) failures.push(`The ${bad.event} webhook ${bad.id} did not verify: ${bad.error}`);

    const dashboardUrl = `${config.publicUrl}/dashboard`;
    if (failures.length === 0) transcript.line('result', 'every channel answered, the barge-in cancelled a turn, the handoff happened, the webhooks verified');
    for (const failure of failures) transcript.line('result', `FAILED: ${failure}`);
    return { ok: failures.length === 0, failures, lines: transcript.lines, serviceUrl: service.url, dashboardUrl, ownerToken: token, inviteUrl: created.owner.invite_url, widgetDemoUrl: `${config.publicUrl}/widget/demo?key=${widgetKey}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
