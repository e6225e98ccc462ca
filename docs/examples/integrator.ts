/**
 * A complete integrator endpoint on this machine, for trying Botlink without a public server (README: A tour): the
 * order desk of ./order-desk.ts on https://127.0.0.1:8443/botlink/channel with the test certificate. It verifies our
 * signatures with the receiver kit, answers order questions itself (to whoever gives the order number and the
 * postcode), and offers three tools. Its port is INTEGRATOR_PORT, so that Botlink's own PORT may stay exported.
 *
 *   BOTLINK_KEY=<the key Botlink showed> npm run example:integrator
 */
import { startOrderDesk } from './order-desk.ts';

const key = process.env.BOTLINK_KEY;
if (!key || key.length < 32) {
  console.error('Set BOTLINK_KEY to the key Botlink showed when you saved the endpoint (at least 32 characters).');
  process.exit(1);
}
const port = Number(process.env.INTEGRATOR_PORT ?? 8443);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error('INTEGRATOR_PORT must be a port number (default 8443).');
  process.exit(1);
}
let desk: Awaited<ReturnType<typeof startOrderDesk>>;
try {
  desk = await startOrderDesk({ key, port });
} catch (err) {
  const code = (err as { code?: string }).code;
  console.error(code === 'EADDRINUSE' ? `Port ${port} is in use: set INTEGRATOR_PORT to a free one.` : `The example integrator could not start: ${String(err)}`);
  process.exit(1);
}
console.log(`Example integrator on ${desk.endpointUrl} (tools: ${desk.toolsBase})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void desk.close().then(() => process.exit(0)));
