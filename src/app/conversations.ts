/**
 * The composition root's conversations (src/app/service.ts): their repository, whether the team can take one now, this
 * engine's name, the live bus across engines, the session runtime, admission control around the channels' turns, and
 * the 30-second sweep (quiet web chats, idle sessions, abandoned calls).
 */
import { randomUUID } from 'node:crypto';
import { liveEventsRepository } from '../../db/repositories/live-events.repository.ts';
import { phoneRepository } from '../../db/repositories/phone.repository.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { teamPresenceRepository } from '../../db/repositories/team-presence.repository.ts';
import { workspaceSettingsRepository } from '../../db/repositories/workspace-settings.repository.ts';
import { startAdmissionMonitor } from '../admission/admission-monitor.ts';
import { countTurns } from '../admission/count-turns.ts';
import { EMBEDDED_TURN_WRITE_LINGER_MS } from '../admission/limits.ts';
import { createTeamAvailability } from '../channels/phone/team-availability.ts';
import { channelRenderers } from '../channels/renderers.ts';
import { createLiveBus } from '../events/live-bus.ts';
import type { Metrics } from '../metrics.ts';
import { createInboxEvents } from '../sessions/inbox-events.ts';
import { createSessionRuntime } from '../sessions/session-runtime.ts';
import type { OutboundClients } from './clients.ts';
import type { KnowledgeBase } from './knowledge.ts';
import type { ServiceOptions } from './options.ts';
import type { ServiceStorage } from './storage.ts';

export interface ConversationsInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'sessions' | 'live' | 'admission' | 'phone'>;
  storage: Pick<ServiceStorage, 'database' | 'embedded'>;
  metrics: Metrics;
  /** What a turn calls out to: the Bot Link (signed with the integration's key), its tools, the AI. */
  clients: Pick<OutboundClients, 'integration' | 'botlink' | 'health' | 'ai' | 'tools'>;
  knowledge: KnowledgeBase['knowledge'];
}

export type Conversations = Awaited<ReturnType<typeof startConversations>>;

export async function startConversations(input: ConversationsInput) {
  const { options, metrics, knowledge } = input;
  const { config, logger } = options;
  const { database, embedded } = input.storage;
  const { integration, botlink, health, ai, tools } = input.clients;
  // Conversations: one actor per session (machines/session.machine.ts).
  const sessions = sessionsRepository(database.db);
  // The team is available while someone of it is (presence per person) and now is inside the team hours when set, on
  // every channel (docs/architecture.md, "Presence and assignment").
  const phoneRepo = phoneRepository(database.db);
  const presenceRepo = teamPresenceRepository(database.db);
  const teamStatus = createTeamAvailability({
    phone: phoneRepo,
    presence: presenceRepo,
    idleMinutes: config.team.presenceIdleMinutes,
    ...(options.phone?.now ? { now: options.phone.now } : {}),
  });
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
    teamAvailable: teamStatus.available,
    // Outside the team hours the customer is told until when the team is away (src/sessions/handoff.ts).
    teamOpensAt: teamStatus.opensAt,
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
  // What the channels hand their customers' messages to: the runtime with each turn counted in flight, so admission
  // control sees the load; the service's own `runtime` stays unwrapped (the tests and benches time that one).
  const runtimeCountingTurns = countTurns(runtime, admission);
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
  return {
    sessions,
    phoneRepo,
    presenceRepo,
    teamStatus,
    engine,
    live,
    inboxEvents,
    runtime,
    admission,
    runtimeCountingTurns,
    workspaceSettings,
    endIdleWebchats,
    sweep,
  };
}
