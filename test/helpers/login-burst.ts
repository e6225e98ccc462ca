/**
 * A burst of sign-ins from another process (so the test process's event loop serves the engines, not 150 clients):
 * `node test/helpers/login-burst.ts <json>` with `{urls, address, attempts: [{email, password}]}`; each attempt is a
 * POST /v1/auth/login on a fresh connection from `address`, the urls taken in turn. Prints "started" once every
 * request is sent, then one line of JSON: the statuses in order.
 */
import { request } from 'node:http';

interface Burst {
  urls: string[];
  address: string;
  attempts: { email: string; password: string }[];
}

const burst = JSON.parse(process.argv[2]!) as Burst;

function login(url: string, body: object): Promise<number> {
  const { hostname, port } = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      { host: hostname, port, localAddress: burst.address, agent: false, method: 'POST', path: '/v1/auth/login', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

const answers = Promise.all(burst.attempts.map((attempt, i) => login(burst.urls[i % burst.urls.length]!, attempt)));
process.stdout.write('started\n');
process.stdout.write(`${JSON.stringify(await answers)}\n`);
