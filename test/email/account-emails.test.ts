/**
 * Invites and password resets by email (docs/interfaces.md: SMTP_URL, POST /v1/auth/reset), through the real service
 * and a real SMTP server on loopback (smtp-server): an invite link reaches the new user and works once; "forgot
 * password" emails a link that sets a new password once, within 1 hour, and answers the same for an unknown address;
 * resets are limited per address; without SMTP nothing is emailed and the link is still shown.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp-server.ts';

describeEachDatabase('invites and password resets by email', (get) => {
  let smtp: TestSmtp;
  let service: TestService;
  let plain: TestService;
  let owner = '';
  let inbox: ReceivedMail[] = [];
  const PASSWORD = 'the first good password';
  const linkIn = (mail: ReceivedMail, path: string) => {
    const match = new RegExp(`https?://\\S+${path}#(bli_[A-Za-z0-9_-]+)`).exec(mail.text);
    expect(match, mail.text).not.toBeNull();
    return match![1]!;
  };
  const mailTo = async (address: string, subject: RegExp) => {
    await expect.poll(() => inbox.some((m) => m.to.includes(address) && subject.test(m.subject)), { timeout: 10_000 }).toBe(true);
    return inbox.filter((m) => m.to.includes(address) && subject.test(m.subject)).at(-1)!;
  };

  beforeAll(async () => {
    smtp = await startTestSmtp();
    inbox = smtp.received;
    service = await startTestService(get(), { SMTP_URL: smtp.url, SMTP_FROM: 'Botlink <team@botlink.example>', PUBLIC_URL: 'https://botlink.example' });
    owner = (await seedWorkspace(service, 'Trail')).owner;
  });
  afterAll(async () => {
    await plain?.stop();
    await service?.stop();
    await smtp?.close();
  });

  it('emails the invite link to a new user, and the link sets their password once', async () => {
    const made = await service.api('POST', '/v1/users', { token: owner, body: { email: 'kim@trail.example', role: 'agent' } });
    expect(made.status).toBe(201);
    expect(made.body.invite_emailed).toBe(true);
    const mail = await mailTo('kim@trail.example', /invited to Trail/);
    const token = linkIn(mail, '/dashboard/invite');
    // The same link as the one shown to the owner.
    expect(made.body.invite_url).toBe(`https://botlink.example/dashboard/invite#${token}`);
    expect((await service.api('POST', '/v1/auth/password', { body: { invite: token, password: PASSWORD } })).status).toBe(200);
    expect((await service.api('POST', '/v1/auth/password', { body: { invite: token, password: PASSWORD } })).status).toBe(410);
  });

  it('emails a reset link that sets a new password once; the old password stops working', async () => {
    const asked = await service.api('POST', '/v1/auth/reset', { body: { email: 'KIM@trail.example' } });
    expect(asked.status).toBe(202);
    const mail = await mailTo('kim@trail.example', /Reset your Botlink password \(Trail\)/);
    expect(mail.text).toContain('It works once, for 1 hour');
    const token = linkIn(mail, '/dashboard/reset');
    const set = await service.api('POST', '/v1/auth/password', { body: { reset: token, password: 'a brand new password' } });
    expect(set.status).toBe(200);
    expect(set.body.user.email).toBe('kim@trail.example');
    expect((await service.api('POST', '/v1/auth/login', { body: { email: 'kim@trail.example', password: PASSWORD } })).status).toBe(401);
    expect((await service.api('POST', '/v1/auth/login', { body: { email: 'kim@trail.example', password: 'a brand new password' } })).status).toBe(200);
    expect((await service.api('POST', '/v1/auth/password', { body: { reset: token, password: 'yet another password' } })).status).toBe(410);
  });

  it('refuses a reset link after its hour', async () => {
    const before = inbox.length;
    expect((await service.api('POST', '/v1/auth/reset', { body: { email: 'kim@trail.example' } })).status).toBe(202);
    await expect.poll(() => inbox.length, { timeout: 10_000 }).toBe(before + 1);
    const mail = await mailTo('kim@trail.example', /Reset your Botlink password/);
    const token = linkIn(mail, '/dashboard/reset');
    await sql`update invites set expires_at = now() - interval '1 second' where used_at is null`.execute(get().db);
    const late = await service.api('POST', '/v1/auth/password', { body: { reset: token, password: 'too late a password' } });
    expect(late.status).toBe(410);
    expect(late.body.error.message).toMatch(/has expired/);
  });

  it('answers an unknown address exactly as a known one, and sends nothing', async () => {
    const before = inbox.length;
    const unknown = await service.api('POST', '/v1/auth/reset', { body: { email: 'nobody@trail.example' } });
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual({});
    await new Promise((r) => setTimeout(r, 500));
    expect(inbox.length).toBe(before);
  });

  it('limits resets per email (whether or not it is known): the sixth in a row is 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 6; i++) {
      const res = await service.api('POST', '/v1/auth/reset', { body: { email: 'flood@trail.example' } });
      statuses.push(res.status);
      retryAfter = res.headers.get('retry-after');
    }
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });

  it('without SMTP_URL: nothing is emailed, the invite link is still in the answer', async () => {
    plain = await startTestService(get());
    const ws = await seedWorkspace(plain, 'Plain');
    const made = await plain.api('POST', '/v1/users', { token: ws.owner, body: { email: 'lee@plain.example', role: 'agent' } });
    expect(made.status).toBe(201);
    expect(made.body.invite_emailed).toBe(false);
    expect(made.body.invite_url).toMatch(/\/dashboard\/invite#bli_/);
    expect((await plain.api('POST', '/v1/auth/reset', { body: { email: 'lee@plain.example' } })).status).toBe(202);
  });
});
