/**
 * `npm run demo` in its short form (`-- --quick`), run as a person runs it: a child process, without the suite's
 * NODE_EXTRA_CA_CERTS (the demo trusts its test CA itself). Its transcript is the product: each channel answered,
 * the barge-in, the tool call, the handoff and the verified lead webhook must be in it, and the exit code must be 0.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let output = '';
let code: number | null = null;

beforeAll(async () => {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn('npm', ['run', '--silent', 'demo', '--', '--quick'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  code = await new Promise<number | null>((resolve) => child.on('close', resolve));
}, 150_000);

describe('npm run demo -- --quick', () => {
  it('exits 0 and says every check passed', () => {
    expect({ code, output }).toMatchObject({ code: 0 });
    expect(output).toMatch(/^\[result\] every channel answered, the barge-in cancelled a turn, the handoff happened, the webhooks verified$/m);
    expect(output).not.toContain('FAILED');
  });

  it('answers the phone from the integrator, with the source and latency from the session API', () => {
    expect(output).toMatch(/^\[phone\] caller: Where is order 1001\? The postcode is 3511 AB\.$/m);
    expect(output).toMatch(/^\[phone\] botlink \(integrator, \d+ ms\): Order 1001 \(Ridge trail shoes, size 39\) is shipped/m);
  });

  it('cancels the pending turn when the caller barges in, and the AI answers with a tool call', () => {
    expect(output).toMatch(/^\[phone\] turn \d+ \("Do you sell tents\?"\) cancelled by the barge-in/m);
    expect(output).toMatch(/^\[tools\] product_search \{.*"query":"hiking boots".*\} → ok, \d+ ms$/m);
    expect(output).toMatch(/^\[phone\] botlink \(ai, \d+ ms; integrator: handled false\): We have the Granite hiking boots/m);
  });

  it('hands the call over to a person: an end frame with reason human, and Twilio dials the transfer number', () => {
    expect(output).toMatch(/^\[phone\] botlink \(handoff, \d+ ms\): I'll connect you with a colleague\.$/m);
    expect(output).toMatch(/^\[handoff\] phone: human \(the customer asked\), connected now$/m);
    expect(output).toMatch(/^\[phone\] end frame: handoffData \{"reason":"human"/m);
    expect(output).toContain('<Dial>+31207654321</Dial>');
  });

  it('answers WhatsApp through the Graph API recorder', () => {
    expect(output).toMatch(/^\[whatsapp\] botlink \(integrator, \d+ ms\): Order 1002 /m);
    expect(output).toMatch(/^\[whatsapp\] \(the reply went out as POST \/v21\.0\/\d+\/messages to the Graph API recorder\)$/m);
  });

  it('answers the website chat from the knowledge pages and delivers verified webhooks', () => {
    expect(output).toMatch(/^\[webchat\] botlink \(ai, \d+ ms\): We deliver in the Netherlands/m);
    expect(output).toMatch(/^\[webhook\] new_chat verified \(webhook-id msg_[\w-]+\)/m);
    expect(output).toMatch(/^\[webhook\] new_lead verified \(webhook-id msg_[\w-]+\): Sam Jansen <sam@example\.org>$/m);
    expect(output).toMatch(/^\[webhook\] escalation verified \(webhook-id msg_[\w-]+\)/m);
  });

  it('names no dashboard address or token for a server that has stopped, and says how to keep it up', () => {
    expect(output).not.toMatch(/^Dashboard:/m);
    expect(output).not.toMatch(/blt_[\w-]{20,}/);
    expect(output).toMatch(/^To open these conversations in the dashboard, run it again with the server kept up: npm run demo -- --keep$/m);
  });
});
