import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';

describe('logs hold no personal data from database errors', () => {
  it("a unique violation's detail (which quotes the email) is redacted; code and constraint stay", () => {
    let out = '';
    const logger = createLogger('info', new Writable({ write(chunk: Buffer, _e, done) { out += chunk.toString(); done(); } }) as never);
    const err = Object.assign(new Error('duplicate key value violates unique constraint "users_workspace_email"'), {
      code: '23505',
      constraint: 'users_workspace_email',
      detail: 'Key (workspace_id, lower(email))=(6a3c…, eve@example.com) already exists.',
      where: 'eve@example.com',
    });
    logger.error({ err }, 'request failed');
    expect(out).not.toContain('eve@example.com');
    const line = JSON.parse(out) as { err: Record<string, unknown> };
    expect(line.err).toMatchObject({ code: '23505', constraint: 'users_workspace_email', detail: '[redacted]' });
  });
});

describe('logs at a terminal', () => {
  it('are one readable line per entry, with the same redaction as the JSON', async () => {
    const { terminalDestination } = await import('../src/log.ts');
    let out = '';
    const logger = createLogger('info', terminalDestination({ write: (text: string) => (out += text) }));
    logger.info({ port: 8080, database: 'pglite', token: 'blt_secret-token' }, 'botlink is ready');
    expect(out).toMatch(/^\d{2}:\d{2}:\d{2} info {2}botlink is ready \(port=8080, database=pglite, token=\[redacted\]\)\n$/);
    expect(out).not.toContain('blt_secret-token');
  });
});
