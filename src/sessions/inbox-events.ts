/**
 * Changes of the team's inbox (docs/architecture.md, "Who handles a conversation"): who handles a conversation, and
 * a new message in it. One emitter, so that every change of the inbox passes one function (`publish`); its listeners
 * are the open `GET /v1/inbox/events` streams and web chat long polls of the conversation's workspace, on every engine
 * through the live bus (src/events/live-bus.ts; docs/architecture.md, "Live events across engines").
 */
import type { HandledBy, MessageFrom } from '../../db/schema.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import type { LiveBus } from '../events/live-bus.ts';
import type { Logger } from '../log.ts';

export interface InboxChange {
  workspaceId: string;
  sessionId: string;
  channel: Channel;
  /**
   * `handled_by`: who handles it changed; `message`: a message was added (customer, bot or agent); `assigned`: it was
   * assigned to `assignedTo` (src/inbox/assignment.ts).
   */
  reason: 'handled_by' | 'message' | 'assigned';
  handledBy: HandledBy;
  agent: { user_id: string; email: string; name: string | null } | null;
  waitingSince: string | null;
  lastMessage: { from: MessageFrom; text: string; at: string } | null;
  /** Who it is assigned to now; present on `assigned` changes only. */
  assignedTo?: { user_id: string; name: string } | null;
}

export type InboxListener = (change: InboxChange) => void;

export function createInboxEvents(logger?: Logger, live?: Pick<LiveBus, 'publish' | 'subscribe'>) {
  const listeners = new Map<string, Set<InboxListener>>();
  // Whatever this engine publishes, for every workspace (the assignment watches conversations start waiting).
  const observers = new Set<InboxListener>();
  return {
    publish(change: InboxChange): void {
      for (const observer of observers) {
        try {
          observer(change);
        } catch (err) {
          logger?.warn({ err, sessionId: change.sessionId }, 'inbox observer failed');
        }
      }
      if (live) return live.publish('inbox', change.workspaceId, change);
      for (const listener of listeners.get(change.workspaceId) ?? []) {
        try {
          listener(change);
        } catch (err) {
          logger?.warn({ err, sessionId: change.sessionId }, 'inbox listener failed');
        }
      }
    },
    /** Every change this engine publishes, of any workspace, before it goes on the live bus. */
    observe(observer: InboxListener): () => void {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    subscribe(workspaceId: string, listener: InboxListener): () => void {
      if (live) return live.subscribe('inbox', workspaceId, (change) => listener(change as InboxChange));
      let set = listeners.get(workspaceId);
      if (!set) listeners.set(workspaceId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(workspaceId);
      };
    },
  };
}

export type InboxEvents = ReturnType<typeof createInboxEvents>;
