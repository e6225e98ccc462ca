/**
 * Private notes (docs/interfaces.md, "The team's tools"): every role writes one on a conversation, it shows among the
 * messages with from "note", and it never reaches the customer: not the widget's long poll (on either engine), not
 * WhatsApp. `@name` notifies that colleague alone: their notifications, and their open inbox stream on the other
 * engine at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NOTE_CHARS } from '../../src/inbox/limits.ts';
import { mentionedIn } from '../../src/inbox/notes.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { followEvents, seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

const SHOP = 'https://shop.example';

describe('@mentions', () => {
  const team = [
    { id: 'u1', email: 'sam.lee@shop.example' },
    { id: 'u2', email: 'ada@shop.example' },
    { id: 'u3', email: 'bo@shop.example' },
  ];
  it('name a colleague by their name or their email before the @, whatever the capitals; an email address mentions nobody', () => {
    expect(mentionedIn('@SAM can you check? cc @ada.', team, 'u3')).toEqual([{ user_id: 'u1', name: 'Sam' }, { user_id: 'u2', name: 'Ada' }]);
    expect(mentionedIn('ask @sam.lee', team, 'u3').map((m) => m.user_id)).toEqual(['u1']);
    expect(mentionedIn('write to ada@shop.example or @nobody', team, 'u3')).toEqual([]);
    // Not the author.
    expect(mentionedIn('@bo reminder to self', team, 'u3')).toEqual([]);
  });

  it('name a colleague with a name of their own by all of it or its first word, and by their email before the @ still', () => {
    const named = [
      { id: 'u1', email: 'sam.lee@shop.example', name: 'Samantha de Vries' },
      { id: 'u2', email: 'ada@shop.example', name: null },
      { id: 'u3', email: 'bo@shop.example', name: 'Bo' },
    ];
    expect(mentionedIn('@samantha DE vries, can you check?', named, 'u3')).toEqual([{ user_id: 'u1', name: 'Samantha de Vries' }]);
    expect(mentionedIn('@Samantha can you check?', named, 'u3')).toEqual([{ user_id: 'u1', name: 'Samantha de Vries' }]);
    expect(mentionedIn('ask @sam.lee', named, 'u3')).toEqual([{ user_id: 'u1', name: 'Samantha de Vries' }]);
    // The name whole, not a longer word that starts with it; the email's first word is not her name any more.
    expect(mentionedIn('@Samanthas and @sam', named, 'u3')).toEqual([]);
    expect(mentionedIn('@Ada', named, 'u3')).toEqual([{ user_id: 'u2', name: 'Ada' }]);
  });
});

/** The inbox stream of a user (GET /v1/inbox/events): its `mention` events. */
function mentionsOf(service: TestService, token: string) {
  return followEvents(service, token, '/v1/inbox/events', 'mention');
}

describeEachDatabase('private notes on a web chat, on two engines', (get) => {
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  const widget = (service: TestService, method: string, path: string, body?: unknown, token?: string) =>
    service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const api = (service: TestService, method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  async function startChat(text: string) {
    const res = await widget(a, 'POST', '/v1/webchat/conversations', { visitor_message: text, page_url: `${SHOP}/bikes` });
    expect(res.status).toBe(201);
    const conversationId = res.body.conversation_id as string;
    await a.runtime.settled();
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    return { conversationId, token: res.body.visitor_token as string, sessionId: session.id };
  }

  beforeAll(async () => {
    a = await startTestService(get(), {}, { sessions: { instanceId: 'engine-a' } });
    b = await startTestService(get(), {}, { sessions: { instanceId: 'engine-b' } });
    ws = await seedWorkspace(a);
    other = await seedWorkspace(a, 'Other');
    expect((await api(a, 'PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api(a, 'GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  it('a note never reaches the widget; the reply after it does, to a long poll waiting on the other engine', async () => {
    const chat = await startChat('Is my bike covered by the warranty?');
    const path = `/v1/webchat/conversations/${chat.conversationId}/messages`;
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.agent)).status).toBe(200);
    const before = await widget(b, 'GET', path, undefined, chat.token);
    const lastId = before.body.messages.at(-1).id as string;
    // The visitor's widget waits on engine b while the agent writes a note, then the reply, on engine a.
    const poll = widget(b, 'GET', `${path}?after=${lastId}&wait=10`, undefined, chat.token);
    await new Promise((r) => setTimeout(r, 150));
    const note = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: 'Bought in 2023: still covered. Secret internal note.' });
    expect(note.status).toBe(201);
    expect(note.body.note).toMatchObject({ id: expect.any(String), from: 'note', text: 'Bought in 2023: still covered. Secret internal note.', author: { user_id: ws.agentId, name: 'Agent' }, mentions: [] });
    await new Promise((r) => setTimeout(r, 300));
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'Yes, it is covered.' })).status).toBe(201);
    const polled = await poll;
    expect(polled.body.messages.map((m: { from: string; text: string }) => [m.from, m.text])).toEqual([['agent', 'Yes, it is covered.']]);
    const all = await widget(a, 'GET', path, undefined, chat.token);
    expect(JSON.stringify(all.body)).not.toContain('Secret internal note');
    // The team sees it among the messages, in order.
    const session = await api(b, 'GET', `/v1/sessions/${chat.sessionId}`, ws.admin);
    expect(session.body.messages.slice(-2).map((m: { from: string; text: string }) => [m.from, m.text])).toEqual([
      ['note', 'Bought in 2023: still covered. Secret internal note.'],
      ['agent', 'Yes, it is covered.'],
    ]);
  });

  it('every role writes notes, holding the conversation or not; empty, too long or another workspace\'s session is refused', async () => {
    const chat = await startChat('Where is my order?');
    for (const token of [ws.owner, ws.admin, ws.agent]) expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, token, { text: 'Checked the courier.' })).status).toBe(201);
    const empty = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: '  ' });
    expect([empty.status, empty.body.error.code]).toEqual([422, 'unprocessable']);
    const long = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: 'x'.repeat(MAX_NOTE_CHARS + 1) });
    expect([long.status, long.body.error.code]).toEqual([422, 'unprocessable']);
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, other.owner, { text: 'Hi' })).status).toBe(404);
    expect((await a.api('POST', `/v1/sessions/${chat.sessionId}/notes`, { body: { text: 'Hi' } })).status).toBe(401);
    const notes = (await api(a, 'GET', `/v1/sessions/${chat.sessionId}`, ws.agent)).body.messages.filter((m: { from: string }) => m.from === 'note');
    expect(notes).toHaveLength(3);
  });

  it('@admin notifies the admin alone: in their notifications, and at once on their inbox stream on the other engine', async () => {
    const chat = await startChat('Can I return a used helmet?');
    const stream = mentionsOf(b, ws.admin);
    const agentStream = mentionsOf(b, ws.agent);
    // The stream's watch reaches engine a within the live bus's refresh.
    await new Promise((r) => setTimeout(r, 1_500));
    const note = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: '@Admin may we take a used helmet back?' });
    expect(note.body.note.mentions).toEqual([{ user_id: ws.adminId, name: 'Admin' }]);
    await until(() => stream.events.length > 0, 5_000);
    await stream.stop();
    await agentStream.stop();
    expect(stream.events).toEqual([{ note_id: note.body.note.id, session_id: chat.sessionId, by: { user_id: ws.agentId, name: 'Agent' }, text: '@Admin may we take a used helmet back?', at: expect.any(String) }]);
    expect(agentStream.events).toEqual([]);
    const forAdmin = (await api(b, 'GET', '/v1/notifications', ws.admin)).body.notifications;
    expect(forAdmin.filter((n: { kind: string }) => n.kind === 'mention')).toEqual([
      expect.objectContaining({ kind: 'mention', session_id: chat.sessionId, message: 'Agent mentioned you in a note: @Admin may we take a used helmet back?' }),
    ]);
    for (const token of [ws.owner, ws.agent]) {
      expect((await api(a, 'GET', '/v1/notifications', token)).body.notifications.filter((n: { kind: string }) => n.kind === 'mention')).toEqual([]);
    }
  });

  describe('editing and deleting a note', () => {
    type Note = { id: string; from: string; text: string; edited_at: string | null; mentions: { user_id: string; name: string }[] };
    const notesIn = async (service: TestService, sessionId: string) =>
      ((await api(service, 'GET', `/v1/sessions/${sessionId}`, ws.agent)).body.messages as Note[]).filter((m) => m.from === 'note');
    const mentionRows = async (token: string, sessionId: string) =>
      ((await api(a, 'GET', '/v1/notifications', token)).body.notifications as { kind: string; session_id: string; message: string }[]).filter(
        (n) => n.kind === 'mention' && n.session_id === sessionId,
      );

    it('the author changes the text: 200 with edited_at, the other engine shows it edited and its session stream says so', async () => {
      const chat = await startChat('My chain keeps slipping.');
      const added = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: 'Probably the derailleur.' });
      expect(added.status).toBe(201);
      expect(added.body.note.edited_at).toBeNull();
      const noteId = added.body.note.id as string;
      const stream = followEvents(b, ws.admin, `/v1/sessions/${chat.sessionId}/events`, 'note');
      // The stream's watch reaches engine a within the live bus's refresh: until then, edits are made again.
      await until(async () => {
        if (stream.events.length > 0) return true;
        expect((await api(a, 'PATCH', `/v1/sessions/${chat.sessionId}/notes/${noteId}`, ws.agent, { text: 'Probably the derailleur (warming up).' })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 200));
        return false;
      }, 10_000);
      const edited = await api(a, 'PATCH', `/v1/sessions/${chat.sessionId}/notes/${noteId}`, ws.agent, { text: '  The chain is worn: replace it.  ' });
      expect(edited.status).toBe(200);
      expect(edited.body.note).toMatchObject({ id: noteId, from: 'note', text: 'The chain is worn: replace it.', author: { user_id: ws.agentId, name: 'Agent' }, edited_at: expect.any(String) });
      expect(Date.parse(edited.body.note.edited_at)).toBeGreaterThanOrEqual(Date.parse(added.body.note.at));
      await until(() => stream.events.some((e) => (e.note as Note).text === 'The chain is worn: replace it.'), 5_000);
      await stream.stop();
      expect(stream.events.at(-1)).toMatchObject({ type: 'note', sessionId: chat.sessionId, note: { id: noteId, text: 'The chain is worn: replace it.', edited_at: edited.body.note.edited_at } });
      expect(await notesIn(b, chat.sessionId)).toEqual([expect.objectContaining({ id: noteId, text: 'The chain is worn: replace it.', edited_at: edited.body.note.edited_at })]);
    });

    it("nobody else changes it, whatever their role (403); another session's or workspace's note is not there (404); empty or too long is refused (422)", async () => {
      const chat = await startChat('Do you fit mudguards?');
      const elsewhere = await startChat('Do you fit lights?');
      const noteId = (await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: 'Yes, 20 euro.' })).body.note.id as string;
      const path = `/v1/sessions/${chat.sessionId}/notes/${noteId}`;
      for (const token of [ws.owner, ws.admin]) {
        const refused = await api(a, 'PATCH', path, token, { text: 'Changed by someone else' });
        expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
      }
      expect((await api(b, 'PATCH', `/v1/sessions/${elsewhere.sessionId}/notes/${noteId}`, ws.agent, { text: 'Wrong session' })).status).toBe(404);
      expect((await api(b, 'DELETE', `/v1/sessions/${elsewhere.sessionId}/notes/${noteId}`, ws.agent)).status).toBe(404);
      expect((await api(a, 'PATCH', path, other.owner, { text: 'Another workspace' })).status).toBe(404);
      expect((await api(a, 'DELETE', path, other.owner)).status).toBe(404);
      expect((await api(a, 'PATCH', `/v1/sessions/${chat.sessionId}/notes/not-a-note`, ws.agent, { text: 'x' })).status).toBe(404);
      const empty = await api(a, 'PATCH', path, ws.agent, { text: ' \n ' });
      expect([empty.status, empty.body.error.code]).toEqual([422, 'unprocessable']);
      const long = await api(a, 'PATCH', path, ws.agent, { text: 'x'.repeat(MAX_NOTE_CHARS + 1) });
      expect([long.status, long.body.error.code]).toEqual([422, 'unprocessable']);
      expect((await a.api('PATCH', path, { body: { text: 'No token' } })).status).toBe(401);
      // Nothing of it changed the note.
      expect(await notesIn(a, chat.sessionId)).toEqual([expect.objectContaining({ id: noteId, text: 'Yes, 20 euro.', edited_at: null })]);
    });

    it('an edit that @mentions the owner tells the owner, once; the admin, told when it was written, is not told again', async () => {
      const chat = await startChat('Can I pay in instalments?');
      const ownerId = (await api(a, 'GET', '/v1/workspace', ws.owner)).body.user.id as string;
      const ownerStream = mentionsOf(b, ws.owner);
      const adminStream = mentionsOf(b, ws.admin);
      const about = (stream: ReturnType<typeof mentionsOf>) => stream.events.filter((e) => e.session_id === chat.sessionId);
      // Both streams' watches reach engine a within the live bus's refresh: notes on another conversation until both hear.
      const warmUp = await startChat('Warming up');
      await until(async () => {
        if (ownerStream.events.length > 0 && adminStream.events.length > 0) return true;
        await api(a, 'POST', `/v1/sessions/${warmUp.sessionId}/notes`, ws.agent, { text: '@owner @admin are you there?' });
        await new Promise((r) => setTimeout(r, 200));
        return false;
      }, 10_000);

      const noteId = (await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: '@admin do we offer instalments?' })).body.note.id as string;
      const path = `/v1/sessions/${chat.sessionId}/notes/${noteId}`;
      const edited = await api(a, 'PATCH', path, ws.agent, { text: '@admin @owner do we offer instalments? Klarna maybe.' });
      expect(edited.status).toBe(200);
      expect(edited.body.note.mentions).toEqual(expect.arrayContaining([
        { user_id: ws.adminId, name: 'Admin' },
        { user_id: ownerId, name: 'Owner' },
      ]));
      // Again, with the same names: nobody is told anything new.
      expect((await api(a, 'PATCH', path, ws.agent, { text: '@owner @admin instalments: Klarna, from 100 euro.' })).status).toBe(200);
      // A note both streams hear after the edits, so what they did not hear of them is known.
      const last = (await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, ws.agent, { text: '@owner @admin one more thing' })).body.note.id as string;
      await until(() => about(ownerStream).some((e) => e.note_id === last) && about(adminStream).some((e) => e.note_id === last), 10_000);
      await ownerStream.stop();
      await adminStream.stop();
      expect(about(ownerStream).map((e) => [e.note_id, e.text])).toEqual([
        [noteId, '@admin @owner do we offer instalments? Klarna maybe.'],
        [last, '@owner @admin one more thing'],
      ]);
      expect(about(adminStream).map((e) => [e.note_id, e.text])).toEqual([
        [noteId, '@admin do we offer instalments?'],
        [last, '@owner @admin one more thing'],
      ]);
      expect((await mentionRows(ws.owner, chat.sessionId)).map((n) => n.message).sort()).toEqual([
        'Agent mentioned you in a note: @admin @owner do we offer instalments? Klarna maybe.',
        'Agent mentioned you in a note: @owner @admin one more thing',
      ]);
      expect((await mentionRows(ws.admin, chat.sessionId)).map((n) => n.message).sort()).toEqual([
        'Agent mentioned you in a note: @admin do we offer instalments?',
        'Agent mentioned you in a note: @owner @admin one more thing',
      ]);
    });

    it("its author or an owner deletes it (204), with its mentions' notifications; an admin or agent deletes nobody else's (403)", async () => {
      const chat = await startChat('Is the shop open on Sunday?');
      const write = async (token: string, text: string) => (await api(a, 'POST', `/v1/sessions/${chat.sessionId}/notes`, token, { text })).body.note.id as string;
      const byAgent = await write(ws.agent, '@admin Sunday opening? By the agent.');
      const byAdmin = await write(ws.admin, 'Closed on Sundays. By the admin.');
      const byOwner = await write(ws.owner, 'Open on the first Sunday of the month. By the owner.');
      const del = (token: string, noteId: string) => api(b, 'DELETE', `/v1/sessions/${chat.sessionId}/notes/${noteId}`, token);
      expect((await del(ws.agent, byAdmin)).status).toBe(403);
      expect((await del(ws.admin, byOwner)).status).toBe(403);
      expect((await del(ws.admin, byAgent)).status).toBe(403);
      expect(await mentionRows(ws.admin, chat.sessionId)).toHaveLength(1);
      // The owner deletes anyone's; the author their own.
      expect((await del(ws.owner, byAgent)).status).toBe(204);
      expect((await del(ws.admin, byAdmin)).status).toBe(204);
      expect((await del(ws.admin, byAdmin)).status).toBe(404);
      expect((await notesIn(a, chat.sessionId)).map((n) => n.id)).toEqual([byOwner]);
      expect(await mentionRows(ws.admin, chat.sessionId)).toEqual([]);
    });
  });
});

describeEachDatabase('a private note on WhatsApp', (get) => {
  let h: Harness;
  const waId = '31620009999';
  const api = (method: string, path: string, token: string, body?: unknown) => h.service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const sentTo = () => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);

  beforeAll(async () => {
    h = await startHarness(get(), { answer: () => ({ reply: 'Let me get a colleague.', handoff: 'human' }) });
  });
  afterAll(async () => {
    await h.close();
  });

  it('is never sent through the Graph API; the agent\'s reply after it is', async () => {
    const res = await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(new Date()), BODY: 'My frame is cracked' }));
    expect(res.status).toBe(200);
    await until(() => sentTo().length > 0);
    const conversation = await until(() => get().db.selectFrom('whatsapp_conversations').select('external_id').where('wa_id', '=', waId).executeTakeFirst());
    const session = await until(() => get().db.selectFrom('sessions').select('id').where('external_id', '=', conversation.external_id).executeTakeFirst());
    await until(async () => (await api('GET', `/v1/sessions/${session.id}`, h.workspace.agent)).body.handled_by === 'waiting');
    expect((await api('POST', `/v1/sessions/${session.id}/takeover`, h.workspace.agent)).status).toBe(200);
    expect((await api('POST', `/v1/sessions/${session.id}/notes`, h.workspace.agent, { text: 'Frame warranty: ask for a photo. Internal only.' })).status).toBe(201);
    expect((await api('POST', `/v1/sessions/${session.id}/messages`, h.workspace.agent, { text: 'Could you send a photo of the crack?' })).status).toBe(201);
    await until(() => sentTo().includes('Could you send a photo of the crack?'));
    // The worker has sent what was queued after the note: the note is not among the sends, nor queued.
    expect(sentTo().some((t) => t.includes('Internal only'))).toBe(false);
    const queued = await get().db.selectFrom('whatsapp_outbound_messages').selectAll().execute();
    expect(JSON.stringify(queued)).not.toContain('Internal only');
  });
});
