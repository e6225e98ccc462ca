/**
 * LISTEN for queued deliveries on real PostgreSQL: recordEvent's `pg_notify` reaches every engine process at commit,
 * naming the endpoint, so its delivery actor claims at once instead of at the next poll. A hint only: when the
 * connection drops, notifications are lost and the poll (the table is the truth) covers the gap; after reconnecting,
 * one poll catches up at once.
 */
import pg from 'pg';
import type { Db } from '../../db/database.ts';
import { notifyChannel } from '../../db/repositories/webhooks.repository.ts';
import type { Logger } from '../log.ts';

/** Wait before reconnecting a lost LISTEN connection. */
export const LISTEN_RECONNECT_MS = 1_000;

export interface OutboxListener {
  close(): Promise<void>;
}

/** Listens on this schema's channel; `onWake(ids)` per notification, `onWake()` after every (re)connect. */
export async function listenForDeliveries(options: {
  url: string;
  db: Db;
  logger: Logger;
  onWake: (endpointIds?: readonly string[]) => void;
}): Promise<OutboxListener> {
  const channel = await notifyChannel(options.db);
  const logger = options.logger.child({ component: 'webhook-listener' });
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: options.url });
    next.on('notification', (message) => {
      if (message.channel === channel) options.onWake(message.payload ? [message.payload] : undefined);
    });
    next.on('error', (err) => {
      logger.warn({ err }, 'the LISTEN connection failed; reconnecting');
      reconnect(next);
    });
    next.on('end', () => reconnect(next));
    client = next;
    await next.connect();
    await next.query(`LISTEN ${quoteIdent(channel)}`);
    options.onWake();
  }

  function reconnect(failed: pg.Client): void {
    if (closed || client !== failed) return;
    client = undefined;
    failed.end().catch(() => {});
    clearTimeout(retry);
    retry = setTimeout(() => {
      connect().catch((err: unknown) => {
        logger.warn({ err }, 'reconnecting the LISTEN connection failed; the poll delivers meanwhile');
        if (client) reconnect(client);
      });
    }, LISTEN_RECONNECT_MS);
    retry.unref();
  }

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
