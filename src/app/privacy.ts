/**
 * Customers' data under control (docs/privacy.md), built once by the composition root (src/app/service.ts): the audit
 * log, retention and its purge, and one customer's export and erasure, with their routes.
 */
import type { Registry } from 'prom-client';
import type { Db } from '../../db/database.ts';
import { privacyRoutes } from '../http/routes/privacy.ts';
import type { RouteDefinition } from '../http/route.ts';
import type { Logger } from '../log.ts';
import { createAudit, type Audit } from '../privacy/audit.ts';
import { createCustomerData, type CustomerDataDeps } from '../privacy/customer-data.ts';
import { createRetention, type Retention } from '../privacy/retention.ts';

export interface Privacy {
  audit: Audit;
  retention: Retention;
  routes: RouteDefinition[];
  /** Starts the purge's timer (intervalMs 0: none); the answer stops it. */
  start(): () => void;
}

export function createPrivacy(deps: {
  db: Db;
  logger: Logger;
  registry: Registry;
  engine: string;
  endConversation: CustomerDataDeps['endConversation'];
  /** How often the purge is tried (ms); 0: never by itself. */
  intervalMs?: number;
}): Privacy {
  const { db, logger } = deps;
  const audit = createAudit({ db, logger });
  const intervalMs = deps.intervalMs;
  const retention = createRetention({ db, audit, logger, registry: deps.registry, engine: deps.engine, ...(intervalMs ? { intervalMs } : {}) });
  const customers = createCustomerData({ db, logger, ...(deps.endConversation ? { endConversation: deps.endConversation } : {}) });
  return {
    audit,
    retention,
    routes: privacyRoutes({ audit, retention, customers }),
    start: () => (intervalMs === 0 ? () => {} : retention.start()),
  };
}
