/**
 * The composition root's HTTP app (src/app/service.ts): the route table mounted with the dashboard's and the widget's
 * pages behind one Node server; the phone's WebSocket is attached to it before it listens.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.ts';
import { createApp, type WidgetAccess } from '../http/app.ts';
import { dashboardPages } from '../http/pages/dashboard.ts';
import { widgetPages } from '../http/pages/widget.ts';
import type { RouteDefinition } from '../http/route.ts';
import type { Audit } from '../privacy/audit.ts';
import type { Metrics } from '../metrics.ts';
import type { Accounts } from './accounts.ts';
import type { ServiceOptions } from './options.ts';

export interface HttpServerInput {
  options: Pick<ServiceOptions, 'config' | 'logger'>;
  routes: RouteDefinition[];
  metrics: Metrics;
  /** Who is asking: a person's token, an API key. */
  accounts: Pick<Accounts, 'accounts' | 'apiKeys'>;
  widget: WidgetAccess;
  audit: Audit;
}

export function createHttpServer(input: HttpServerInput): Server {
  const { options, routes, metrics, widget, audit } = input;
  const { config, logger } = options;
  const { accounts, apiKeys } = input.accounts;
  const pages = [dashboardPages(), widgetPages({ publicUrl: config.publicUrl })];
  const app = createApp({ routes, accounts, metrics, logger, adminToken: config.adminToken, apiKeys, widget, pages, audit, trustProxy: config.trustProxy });
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 15_000 }, app);
  // An idle kept-alive connection is closed by whichever side's timer runs out first; when it is the server's, a
  // client (a reverse proxy such as Caddy, whose upstream connections idle up to 2 minutes, or undici's 4 s) may send
  // its next request on a socket the server is closing, and gets ECONNRESET or a 502. So the server keeps idle
  // connections longer than its clients do (docs/operations.md, "Behind a reverse proxy").
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return server;
}

/** Longer than Caddy's upstream idle time (2 min), so the proxy, not the engine, closes an idle connection. */
export const KEEP_ALIVE_MS = 125_000;

/** Listens on PORT and HOST; the answer is the address bound and the URL it is reached at. */
export async function listen(input: { server: Server; config: Pick<Config, 'port' | 'host'> }): Promise<{ address: AddressInfo; url: string }> {
  const { server, config } = input;
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { address, url: `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}` };
}
