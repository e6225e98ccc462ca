/**
 * Meta's WhatsApp webhook payload, as properties. Pure: whatever the body, `parseWebhook` gives the changes or throws
 * its own WebhookPayloadError, nothing else; what it reads is storable: text by the outside-text rule
 * (src/text/outside-text.ts) and otherwise as sent, times a database can hold, error codes an `integer` can. Over
 * HTTP: a correctly signed body is answered 200 only once it is stored, and every message in it is stored and
 * answered, whatever its text held.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWebhook, WebhookPayloadError, type ParsedWebhook } from '../../src/channels/whatsapp/payload.ts';
import { MAX_NAME_CHARS } from '../../src/limits.ts';
import { cleanText } from '../../src/text/outside-text.ts';
import { metaTextMessage } from '../../harness/meta-webhook.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText, OVER_HTTP } from './outside.ts';

const NOW = new Date('2025-06-25T12:00:00Z');
/** The end of year 9999: later times are written with six-digit years, which PGlite refuses. */
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const INT32 = 2 ** 31;

/** JSON as Meta writes it: every character past ASCII escaped as \uXXXX (a lone surrogate too). */
function metaJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
const serialised = (value: unknown) => fc.constantFrom(JSON.stringify(value), metaJson(value));

const anyField = fc.oneof(outsideText(), outsideJson(2));
const timestamp = fc.oneof(
  fc.integer({ min: 1_600_000_000, max: 1_800_000_000 }).map(String),
  fc.constantFrom('99999999999999999', '1e400', '-5', '0', '1.5', 'soon', '253402300799', '253402300800', 8.64e12, 8.64e12 + 1, 1e300),
  anyField,
);
const errorCode = fc.oneof(fc.integer({ min: 0, max: 200_000 }), fc.constantFrom(1.5, -1, INT32, INT32 - 1, -INT32, 2 ** 53, 1e300), anyField);
const message = fc.record(
  {
    from: fc.oneof(fc.stringMatching(/^[0-9]{8,15}$/), anyField, dirtyText),
    id: fc.oneof(fc.constant('wamid.HBgLMzE2MTIzNDU2NzgVAgASGBQzQUI'), anyField, dirtyText),
    timestamp,
    type: fc.oneof(fc.constantFrom('text', 'image', 'reaction', 'interactive'), anyField),
    text: fc.oneof(fc.record({ body: fc.oneof(outsideText(), dirtyText, anyField) }), anyField),
    // A tap on a reply button (the satisfaction question's, or another app's).
    interactive: fc.oneof(
      fc.record({ type: fc.oneof(fc.constant('button_reply'), anyField), button_reply: fc.oneof(fc.record({ id: fc.oneof(outsideText(), dirtyText, anyField), title: fc.oneof(outsideText(), dirtyText, anyField) }, { requiredKeys: [] }), anyField) }, { requiredKeys: [] }),
      anyField,
    ),
  },
  { requiredKeys: [] },
);
const status = fc.record(
  {
    id: fc.oneof(fc.constant('wamid.OUT1'), anyField, dirtyText),
    status: fc.oneof(fc.constantFrom('sent', 'delivered', 'read', 'failed'), anyField),
    timestamp,
    recipient_id: anyField,
    errors: fc.oneof(fc.array(fc.record({ code: errorCode, title: fc.oneof(outsideText(), dirtyText, anyField), message: anyField }, { requiredKeys: [] }), { maxLength: 2 }), anyField),
  },
  { requiredKeys: [] },
);
const change = fc.record(
  {
    field: fc.oneof(fc.constant('messages'), anyField),
    value: fc.oneof(
      fc.record(
        {
          messaging_product: fc.constant('whatsapp'),
          metadata: fc.oneof(fc.record({ phone_number_id: fc.oneof(fc.constant(PHONE_NUMBER_ID), anyField, dirtyText) }), anyField),
          contacts: fc.oneof(fc.array(fc.record({ wa_id: fc.oneof(fc.stringMatching(/^[0-9]{8,15}$/), anyField), profile: fc.oneof(fc.record({ name: fc.oneof(outsideText(), dirtyText, outsideText({ minLength: 115, maxLength: 130 }), anyField) }), anyField) }, { requiredKeys: [] }), { maxLength: 2 }), anyField),
          messages: fc.oneof(fc.array(fc.oneof(message, anyField), { maxLength: 3 }), anyField),
          statuses: fc.oneof(fc.array(fc.oneof(status, anyField), { maxLength: 3 }), anyField),
        },
        { requiredKeys: [] },
      ),
      anyField,
    ),
  },
  { requiredKeys: [] },
);
const payload = fc.record(
  {
    object: fc.oneof(fc.constant('whatsapp_business_account'), anyField),
    entry: fc.oneof(fc.array(fc.oneof(fc.record({ id: anyField, changes: fc.oneof(fc.array(fc.oneof(change, anyField), { maxLength: 3 }), anyField) }, { requiredKeys: [] }), anyField), { maxLength: 3 }), anyField),
  },
  { requiredKeys: [] },
);

/** parseWebhook's answer, or its own error; any other throw fails the test. */
function parse(body: string): ParsedWebhook | WebhookPayloadError {
  try {
    return parseWebhook(body, NOW);
  } catch (err) {
    if (err instanceof WebhookPayloadError) return err;
    throw err;
  }
}

function expectStorable(parsed: ParsedWebhook): void {
  expectAllClean(parsed);
  expect(Number.isInteger(parsed.skipped) && parsed.skipped >= 0).toBe(true);
  for (const c of parsed.changes) {
    expect(c.phoneNumberId).not.toBe('');
    for (const m of c.messages) {
      expect(m.id !== '' && m.waId !== '' && m.type !== '').toBe(true);
      // A button's id is read from a tap only, and never empty.
      if (m.replyId !== null) expect(m.type === 'interactive' && m.replyId !== '').toBe(true);
      expect(m.sentAt.getTime() >= 0 && m.sentAt.getTime() <= LATEST).toBe(true);
      if (m.profileName !== null) expect(Array.from(m.profileName).length).toBeLessThanOrEqual(MAX_NAME_CHARS);
    }
    for (const s of c.statuses) {
      expect(['sent', 'delivered', 'read', 'failed']).toContain(s.status);
      expect(s.at.getTime() >= 0 && s.at.getTime() <= LATEST).toBe(true);
      const code = s.error?.code ?? null;
      if (code !== null) expect(Number.isInteger(code) && code >= -INT32 && code < INT32).toBe(true);
    }
  }
}

describe("Meta's webhook payload, whatever it holds", () => {
  it('property: any body: the changes or a WebhookPayloadError, never another throw', () => {
    const body = fc.oneof(outsideText(), outsideJson().map((v) => JSON.stringify(v)), payload.chain(serialised));
    fc.assert(
      fc.property(body, (text) => {
        const parsed = parse(text);
        if (!(parsed instanceof WebhookPayloadError)) expectStorable(parsed);
      }),
      { numRuns: 400 },
    );
  });

  it('property: every message and status read is storable: clean text, a real time, a 32-bit error code', () => {
    fc.assert(
      fc.property(payload.map((p) => ({ ...p, object: 'whatsapp_business_account' })).chain(serialised), (text) => {
        const parsed = parse(text);
        expect(parsed).not.toBeInstanceOf(WebhookPayloadError);
        expectStorable(parsed as ParsedWebhook);
      }),
      { numRuns: 400 },
    );
  });

  it('property: the text and the profile name arrive as sent, with only U+0000 and lone surrogates replaced', () => {
    const fields = fc.record({ text: fc.oneof(outsideText(), dirtyText), name: fc.oneof(outsideText(), outsideText({ minLength: 115, maxLength: 130 })), waId: fc.oneof(fc.stringMatching(/^[0-9]{8,15}$/), dirtyText) });
    fc.assert(
      fc.property(fields, fc.boolean(), ({ text, name, waId }, escaped) => {
        const body = {
          object: 'whatsapp_business_account',
          entry: [{ id: '1', changes: [{ field: 'messages', value: { metadata: { phone_number_id: PHONE_NUMBER_ID }, contacts: [{ wa_id: waId, profile: { name } }], messages: [{ from: waId, id: 'wamid.A', timestamp: '1750857384', type: 'text', text: { body: text } }] } }] }],
        };
        const parsed = parse(escaped ? metaJson(body) : JSON.stringify(body)) as ParsedWebhook;
        const [read] = parsed.changes[0]!.messages;
        const cleanName = cleanText(name).trim();
        expect(read).toEqual({
          id: 'wamid.A',
          waId: cleanText(waId),
          sentAt: new Date(1750857384_000),
          type: 'text',
          text: cleanText(text),
          replyId: null,
          profileName: cleanName === '' ? null : Array.from(cleanName).slice(0, MAX_NAME_CHARS).join(''),
        });
      }),
      { numRuns: 300 },
    );
  });

  it('property: a body nested thousands of levels deep, anywhere, is read or refused with a WebhookPayloadError', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30_000 }), fc.constantFrom('object', 'entry', 'value', 'text', 'errors'), (depth, where) => {
        const deep = nestedJsonText(depth, '"\\u0000"');
        const value = (inner: string) => `{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"1"},${inner}}}]}]}`;
        const body = {
          object: `{"object":${deep}}`,
          entry: `{"object":"whatsapp_business_account","entry":${deep}}`,
          value: value(`"messages":${deep}`),
          text: value(`"messages":[{"from":"1","id":"w","type":"text","text":{"body":${deep}}}]`),
          errors: value(`"statuses":[{"id":"w","status":"failed","errors":[{"code":${deep},"title":${deep}}]}]`),
        }[where];
        const parsed = parse(body);
        if (where === 'object') expect(parsed).toBeInstanceOf(WebhookPayloadError);
        else expectStorable(parsed as ParsedWebhook);
      }),
      { numRuns: 60 },
    );
  });
});

describeEachDatabase("Meta's webhook over HTTP: acknowledged means stored", (get) => {
  let h: Harness;
  const sent: { messageId: string; text: string; input: unknown }[] = [];

  beforeAll(async () => {
    h = await startHarness(get());
  });
  afterAll(async () => {
    await h.close();
  });

  const textMessage = (messageId: string, waId: string, text: string, name: string, sentAt: unknown, code: unknown) =>
    metaTextMessage({
      phoneNumberId: PHONE_NUMBER_ID,
      waId,
      messageId,
      text,
      name,
      timestamp: sentAt,
      // A failure report for a message we never sent: nothing to update, but it is read with the rest.
      more: { statuses: [{ id: 'wamid.NEVER', status: 'failed', timestamp: sentAt, recipient_id: waId, errors: [{ code, title: text }] }] },
    });

  it('property: a signed message holding any text, time and error code is answered 200, stored, then read and answered', async () => {
    const fields = fc.record({
      // A text that begins with U+FEFF loses it on PGlite; the test after this one holds that case.
      text: fc.oneof(dirtyText, outsideText({ minLength: 1 })).filter((t) => !t.startsWith('\uFEFF')),
      name: outsideText(),
      waSuffix: fc.oneof(fc.constant(''), dirtyText),
      escaped: fc.boolean(),
      sentAt: fc.oneof(fc.constant(String(Math.floor(Date.now() / 1000))), timestamp),
      code: errorCode,
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fields, async ({ text, name, waSuffix, escaped, sentAt, code }) => {
        const messageId = `${wamid('PROP')}${waSuffix}`;
        const waId = `3161${String(1_000_000 + n++)}`;
        const body = textMessage(messageId, waId, text, name, sentAt, code);
        const raw = Buffer.from(escaped ? metaJson(body) : JSON.stringify(body), 'utf8');
        const res = await h.post(raw);
        expect(res.status).toBe(200);
        const stored = await h.service.database.db.selectFrom('whatsapp_webhook_events').select('id').where('body', '=', raw.toString('utf8')).execute();
        expect(stored).toHaveLength(1);
        sent.push({ messageId: cleanText(messageId), text: cleanText(text), input: { messageId, text, name, sentAt, code } });
      }),
      // The latest time a Date holds (year 275760): PGlite refused it and lost the whole event.
      { numRuns: 25, ...OVER_HTTP, examples: [[{ text: 'Hi', name: 'Ann', waSuffix: '', escaped: false, sentAt: 8_640_000_000_000, code: 131047 }]] },
    );

    // Every message acknowledged above is read into a row of its own with its text as sent (cleaned), and answered.
    const inbound = async () => {
      const all = await h.service.database.db.selectFrom('whatsapp_inbound_messages').select(['message_id', 'text', 'state']).execute();
      return sent.map((s) => all.find((r) => r.message_id === s.messageId) ?? { message_id: s.messageId, text: null, state: 'missing' });
    };
    await until(async () => (await inbound()).every((r) => r.state === 'done' || r.state === 'failed'), 10_000).catch(() => undefined);
    const rows = await inbound();
    const lost = sent.flatMap((s, i) => (rows[i]!.state === 'done' && rows[i]!.text === s.text ? [] : [{ sent: s.input, stored: rows[i] }]));
    expect(rows, `not stored or not answered: ${JSON.stringify(lost)}`).toEqual(sent.map((s) => ({ message_id: s.messageId, text: s.text, state: 'done' })));
  });

  it('a text message that begins with U+FEFF is stored and answered; read back as sent (PGlite: without the U+FEFF)', async () => {
    const messageId = wamid('BOM');
    const text = '\uFEFFWhere is my order?';
    expect((await h.post(Buffer.from(metaJson(textMessage(messageId, '31611119999', text, 'Ann', String(Math.floor(Date.now() / 1000)), 1)), 'utf8'))).status).toBe(200);
    const row = await until(async () => {
      const found = await h.service.database.db.selectFrom('whatsapp_inbound_messages').select(['text', 'state']).where('message_id', '=', messageId).executeTakeFirst();
      return found?.state === 'done' ? found : undefined;
    });
    // PGlite decodes every text it returns with a TextDecoder that drops a leading BOM (docs/reliability.md, "Known
    // limits"); the bytes are stored, and PostgreSQL gives them back as sent.
    expect(row.text).toBe(h.service.database.kind === 'pglite' ? text.slice(1) : text);
  });

  it('a signed body holding a raw U+0000 byte (not JSON, but signed) is still answered 200 and stored', async () => {
    const raw = Buffer.concat([Buffer.from('{"object":"whatsapp_business_account","entry":[]}'), Buffer.from([0x00])]);
    const res = await h.post(raw);
    expect(res.status).toBe(200);
    const event = await until(async () => (await h.service.database.db.selectFrom('whatsapp_webhook_events').selectAll().execute()).find((e) => e.body.startsWith('{"object":"whatsapp_business_account","entry":[]}') && e.body.length > 49));
    expect(event.outcome === null || event.outcome === 'invalid').toBe(true);
  });
});
