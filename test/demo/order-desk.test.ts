/**
 * The reference integrator (docs/examples/order-desk.ts) as an example to copy: order details only to a caller who
 * proves the order is theirs with its number and the postcode of the delivery address (docs/integrators.md §3), and
 * the customer's identity sent back only after that proof.
 */
import { describe, expect, it } from 'vitest';
import { answerChannelRequest, callTool } from '../../docs/examples/order-desk.ts';

const ask = (message: string, channel: 'phone' | 'whatsapp' = 'whatsapp') =>
  answerChannelRequest({ channel, session_id: 's1', message, language: 'en', customer: { phone: '+31612345678' }, sent_at: 0 });

describe('the order desk', () => {
  it('asks for the postcode when only the order number is given, and tells nothing of the order', () => {
    const answer = ask('Where is order 1001?');
    expect(answer.reply).toMatch(/postcode/);
    expect(answer.reply).not.toMatch(/Ridge|shipped|PostNL/);
    expect(answer.customer).toBeUndefined();
  });

  it('answers a wrong postcode exactly like an unknown order', () => {
    const wrong = ask('Where is order 1001? Postcode 1012 JS.');
    const unknown = ask('Where is order 9999? Postcode 1012 JS.');
    expect(wrong.reply.replace('1001', 'N')).toBe(unknown.reply.replace('9999', 'N'));
    expect(wrong.customer).toBeUndefined();
  });

  it('answers the order and names its customer (on WhatsApp) once number and postcode belong together', () => {
    const answer = ask('Is my order 1001 on its way? My postcode is 3511 ab.');
    expect(answer).toMatchObject({ handled: true, customer: { name: 'Sheena Nelson', email: 'sheena@example.com' } });
    expect(answer.reply).toMatch(/^Order 1001 \(Ridge trail shoes, size 39\) is shipped/);
    expect(ask('Where is order 1001? 3511AB', 'phone').customer).toBeUndefined();
  });

  it("order_status, the AI's tool, needs the postcode too", () => {
    expect(callTool({ tool: 'order_status', args: { order: '1002' }, language: 'en', session_id: 's1', sent_at: 0 })).toMatchObject({ ok: false, error: expect.stringMatching(/postcode/) });
    expect(callTool({ tool: 'order_status', args: { order: '1002', postcode: '1234 AB' }, language: 'en', session_id: 's1', sent_at: 0 }).ok).toBe(false);
    expect(callTool({ tool: 'order_status', args: { order: '1002', postcode: '1012 js' }, language: 'en', session_id: 's1', sent_at: 0 })).toMatchObject({ ok: true, result: { status: 'being packed' } });
  });
});
