/**
 * The benchmarks' peers on loopback HTTPS (integrator, Graph API, webhook receiver, LLM), with the test certificate,
 * and the CA bundle that makes a service process trust them (its NODE_EXTRA_CA_CERTS).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const tlsDir = new URL('../../test/fixtures/tls/', import.meta.url);
const tls = { cert: readFileSync(new URL('server.pem', tlsDir), 'utf8'), key: readFileSync(new URL('server-key.pem', tlsDir), 'utf8') };

/** An HTTPS server on 127.0.0.1 that hands each request to `handler` with its whole body; long keep-alive for load. */
export function https(handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Promise<{ server: Server; origin: string }> {
  const server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  });
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 130_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

/** A service's NODE_EXTRA_CA_CERTS: whatever bundle this machine names, plus the test CA the peers' certificate comes from. */
export function caBundle(folder: string): string {
  const existing = process.env.NODE_EXTRA_CA_CERTS;
  const previous = existing && existsSync(existing) ? readFileSync(existing, 'utf8') : '';
  const file = join(folder, 'ca-bundle.pem');
  writeFileSync(file, `${previous}\n${readFileSync(new URL('ca.pem', tlsDir), 'utf8')}`);
  return file;
}
