/**
 * The events are written in the same transaction as their cause (src/webhooks/outbox.ts): when the outbox write
 * fails, the conversation, the lead or the escalation mark is not there either, and the event did not happen.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { createWebchatService, type WebchatService } from '../../../src/channels/webchat/webchat-service.ts';
import { createLogger } from '../../../src/log.ts';
import type { SessionRuntime } from '../../../src/sessions/session-runtime.ts';
import { asksForPerson } from '../../../src/text/person-request.ts';
import { describeEachDatabase } from '../../helpers/db.ts';

describeEachDatabase('website chat: an event and its cause commit together', (get) => {
  let webchat: WebchatService;
  const workspaceId = randomUUID();
  const turns: string[] = [];
  let visitorToken = '';

  beforeAll(async () => {
    const { db } = get();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'Shop' }).execute();
    // The outbox refuses any event whose payload mentions "refuse-me", as a failing disk or constraint would.
    await sql`create function refuse_outbox() returns trigger language plpgsql as $$
      begin
        if new.payload::text like '%refuse-me%' then raise exception 'outbox refused'; end if;
        return new;
      end $$`.execute(db);
    await sql`create trigger refuse_outbox before insert on webhook_events for each row execute function refuse_outbox()`.execute(db);
    const runtime: Pick<SessionRuntime, 'handleMessage' | 'open'> = {
      async handleMessage(message) {
        turns.push(message.text);
        // As the session does: a message that asks for a person is a handoff the customer asked for.
        const handoff = asksForPerson(message.text) ? { kind: 'human' as const, connected: false, sentence: '', requestedBy: 'customer' as const } : null;
        return { cancelled: false, sessionId: 's', turnId: 't', text: 'An answer.', unsent: 'An answer.', source: 'knowledge_base', language: 'en', handoff };
      },
      async open() {
        return { sessionId: 's' };
      },
    };
    webchat = createWebchatService({ db, runtime, publicUrl: 'https://botlink.example', logger: createLogger('silent') });
  });

  const conversations = () => get().db.selectFrom('webchat_conversations').selectAll().where('workspace_id', '=', workspaceId).execute();

  it('new_chat refused: no conversation row, and no turn was run', async () => {
    await expect(webchat.start(workspaceId, { visitorMessage: 'refuse-me', pageUrl: 'https://shop.example/', language: 'en' })).rejects.toThrow('outbox refused');
    expect(await conversations()).toEqual([]);
    expect(turns).toEqual([]);
  });

  it('new_lead refused: the contact details are not saved', async () => {
    const started = await webchat.start(workspaceId, { visitorMessage: 'Hello', pageUrl: 'https://shop.example/', language: 'en' });
    visitorToken = started.visitor_token;
    await expect(webchat.lead(workspaceId, started.conversation_id, { visitorToken, name: 'refuse-me', email: 'a@b.nl', phone: '' })).rejects.toThrow('outbox refused');
    const [row] = await conversations();
    expect(row).toMatchObject({ visitor_name: null, visitor_email: null, lead_at: null });
  });

  it('escalation refused: not marked, so the next request for a person records it', async () => {
    const [row] = await conversations();
    await expect(webchat.message(workspaceId, row!.id, { visitorToken, message: 'A human, refuse-me', language: null })).rejects.toThrow('outbox refused');
    expect((await conversations())[0]!.escalation_detected_at).toBeNull();
    await webchat.message(workspaceId, row!.id, { visitorToken, message: 'human please', language: null });
    expect((await conversations())[0]!.escalation_detected_at).not.toBeNull();
    const events = await get().db.selectFrom('webhook_events').select('event').where('workspace_id', '=', workspaceId).execute();
    expect(events.map((e) => e.event)).toEqual(['new_chat', 'escalation']);
  });
});
