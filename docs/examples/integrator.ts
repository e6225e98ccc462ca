/**
 * A complete integrator endpoint on this machine, for trying Botlink without a public server (README: A tour): the
 * order desk of ./order-desk.ts on https://127.0.0.1:8443/botlink/channel with the test certificate. It verifies our
 * signatures with the receiver kit, answers order questions itself, and offers three tools.
 *
 *   BOTLINK_KEY=<the key Botlink showed> npm run example:integrator
 */
import { startOrderDesk } from './order-desk.ts';

const key = process.env.BOTLINK_KEY;
if (!key || key.length < 32) {
  console.error('Set BOTLINK_KEY to the key Botlink showed when you saved the endpoint (at least 32 characters).');
  process.exit(1);
}
const desk = await startOrderDesk({ key, port: Number(process.env.PORT ?? 8443) });
console.log(`Example integrator on ${desk.endpointUrl} (tools: ${desk.toolsBase})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void desk.close().then(() => process.exit(0)));
