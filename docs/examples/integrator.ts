/**
 * A complete integrator endpoint on this machine, for trying Botlink without a public server (README: A tour).
 * It serves https://127.0.0.1:8443/botlink/channel with the test certificate, verifies our signatures with the
 * receiver kit, answers order questions itself, and offers one tool.
 *
 *   BOTLINK_KEY=<the key Botlink showed> npm run example:integrator
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import express from 'express';
import { channelReceiver, toolsReceiver } from '../../src/receiver/index.ts';

const key = process.env.BOTLINK_KEY;
if (!key || key.length < 32) {
  console.error('Set BOTLINK_KEY to the key Botlink showed when you saved the endpoint (at least 32 characters).');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8443);
const tls = new URL('../../test/fixtures/tls/', import.meta.url);

const app = express();
app.post('/botlink/channel', channelReceiver(key), (req, res) => {
  const { message } = req.body as { message: string };
  const order = /\b(\d{3,})\b/.exec(message)?.[1];
  // Only questions about an order are ours; everything else goes to Botlink's own AI (handled: false).
  if (!order) return void res.json({ reply: 'No order number in the question.', handled: false });
  res.json({ reply: `Order ${order} was shipped yesterday and arrives tomorrow.`, handled: true });
});
app.get('/botlink/tools/manifest', toolsReceiver(key), (_req, res) => {
  res.json({ tools: [{ name: 'order_status', description: 'The status of an order by its number', parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] } }] });
});
app.post('/botlink/tools', toolsReceiver(key), (req, res) => {
  const { tool, args } = req.body as { tool: string; args: { order?: string } };
  if (tool !== 'order_status') return void res.json({ ok: false, error: `Unknown tool ${tool}` });
  res.json({ ok: true, result: { order: args.order, status: 'shipped', eta: 'tomorrow' } });
});

createServer({ cert: readFileSync(new URL('server.pem', tls)), key: readFileSync(new URL('server-key.pem', tls)) }, app).listen(port, '127.0.0.1', () => {
  console.log(`Example integrator on https://127.0.0.1:${port}/botlink/channel`);
});
