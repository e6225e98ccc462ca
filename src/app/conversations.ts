/**
 * The composition root's third stage (src/service.ts): the conversations. This engine's name, the live bus across
 * engines, the session runtime, admission control around the channels' turns, and the 30-second sweep (quiet web
 * chats, idle sessions, abandoned calls).
 */
import { randomUUID } from 'node:crypto';
import { liveEventsRepository } from '../../db/repositories/live-events.repository.ts';
import { workspaceSettingsRepository } from '../../db/repositories/workspace-settings.repository.ts';
import { startAdmissionMonitor } from '../admission/admission-monitor.ts';
import { countTurns } from '../admission/count-turns.ts';
import { EMBEDDED_TURN_WRITE_LINGER_MS } from '../admission/limits.ts';
import { channelRenderers } from '../channels/renderers.ts';
import { createLiveBus } from '../events/live-bus.ts';
import type { ServiceBase } from './knowledge.ts';
import type { ServiceOptions } from './options.ts';
import type { ServiceStorage } from './storage.ts';
import { createInboxEvents } from '../sessions/inbox-events.ts';
import { createSessionRuntime } from '../sessions/session-runtime.ts';

export type Conversations = Awaited<ReturnType<typeof startConversations>>;

export async function startConversations(options: ServiceOptions, storage: ServiceStorage, base: ServiceBase) {
  const { config, logger } = options;
  const { database, embedded } = storage;
  const { teamAvailable, sessions, integration, botlink, health, knowledge, ai, tools, metrics } = base;
  // This engine's name: its session leases and its live events carry it.
  const engine = options.sessions?.instanceId ?? `engine-${randomUUID()}`;
  // Live events reach the streams of every engine (src/events/live-bus.ts).
  const live = createLiveBus({
    events: liveEventsRepository(database.db),
    logger,
    engine,
    ...(database.listen ? { listen: database.listen } : {}),
    ...(options.live ?? {}),
  });
  await live.start();
  // Changes of the team's inbox pass this one emitter (src/sessions/inbox-events.ts), to every engine's streams.
  const inboxEvents = createInboxEvents(logger, live);
  const runtime = createSessionRuntime({
    live,
    teamAvailable,
    // Outside the team hours the customer is told until when the team is away (src/sessions/handoff.ts).
    teamOpensAt: base.teamStatus.opensAt,
    inbox: inboxEvents,
    sessions,
    renderers: channelRenderers,
    credentials: (workspaceId) => integration.credentials(workspaceId),
    botlink,
    health,
    knowledge,
    ai,
    tools,
    logger,
    // PGlite runs on this process's event loop: its turn ends go in batches (src/admission/limits.ts says why).
    ...(embedded ? { turnWriteLingerMs: EMBEDDED_TURN_WRITE_LINGER_MS } : {}),
    ...(options.sessions?.idleMs ? { idleMs: options.sessions.idleMs } : {}),
    instanceId: engine,
    leaseMs: config.leaseMs,
  });
  const admission = startAdmissionMonitor({ embedded, metrics, logger, ...(options.admission ? { limits: options.admission } : {}) });
  // The channels' turns are counted in flight (the service's `runtime` itself stays the one the tests and benches see).
  const channelRuntime = countTurns(runtime, admission);
  const workspaceSettings = workspaceSettingsRepository(database.db);
  /** docs/webchat.md, "When a chat ends": one UPDATE that every engine may run; open dashboards hear of each end. */
  async function endIdleWebchats(): Promise<number> {
    const ended = await workspaceSettings.endIdleWebchats();
    for (const s of ended) live.publish('session', s.id, { type: 'state', sessionId: s.id, state: 'ended', status: 'ended' });
    if (ended.length > 0) logger.info({ ended: ended.length }, 'quiet web chats were ended');
    return ended.length;
  }
  const sweep = setInterval(() => {
    void endIdleWebchats().catch((err: unknown) => logger.error({ err }, 'ending quiet web chats failed'));
    void runtime.passivateIdle().catch((err: unknown) => logger.error({ err }, 'passivation failed'));
    void runtime.endAbandonedCalls().catch((err: unknown) => logger.error({ err }, 'ending abandoned phone sessions failed'));
  }, 30_000);
  sweep.unref();
  return { engine, live, inboxEvents, runtime, admission, channelRuntime, workspaceSettings, endIdleWebchats, sweep };
}
