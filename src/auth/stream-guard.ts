/**
 * Open live streams (`GET /v1/sessions/{id}/events`) and the token each was opened with. A token is checked when a
 * request starts; a stream outlives that moment by hours, so every STREAM_RECHECK_MS the guard asks the database which
 * of the open streams' tokens are still live (one query for all of them) and ends the streams of any that is not:
 * revoked (DELETE /v1/tokens/current, DELETE /v1/users/{id}), expired, its user removed, or its workspace disabled by
 * the operator. The database is the one every process shares, so a revocation made on any process ends the streams on
 * every process within that time.
 *
 * It also bounds how many streams one user (whatever their tokens) and one workspace may hold open (docs/reliability.md,
 * "Limits per token"): per user, so one user cannot take the workspace's streams from everyone else.
 */
import { AppError } from '../errors.ts';
import { MAX_STREAMS_PER_USER, MAX_STREAMS_PER_WORKSPACE, STREAM_RECHECK_MS } from '../limits.ts';
import type { Logger } from '../log.ts';

export interface StreamOwner {
  tokenId: string;
  userId: string;
  workspaceId: string;
}

export interface StreamGuardOptions {
  /** Of these token ids, the live ones (AccountsService.liveTokenIds). */
  liveTokenIds(tokenIds: readonly string[]): Promise<Set<string>>;
  logger: Logger;
  recheckMs?: number;
  maxPerUser?: number;
  maxPerWorkspace?: number;
}

interface OpenStream {
  owner: StreamOwner;
  end: () => void;
}

export function createStreamGuard(options: StreamGuardOptions) {
  const recheckMs = options.recheckMs ?? STREAM_RECHECK_MS;
  const maxPerUser = options.maxPerUser ?? MAX_STREAMS_PER_USER;
  const maxPerWorkspace = options.maxPerWorkspace ?? MAX_STREAMS_PER_WORKSPACE;
  const log = options.logger.child({ component: 'stream-guard' });
  const open = new Set<OpenStream>();
  let timer: NodeJS.Timeout | undefined;
  let checking = false;

  function count(predicate: (s: OpenStream) => boolean): number {
    let n = 0;
    for (const s of open) if (predicate(s)) n++;
    return n;
  }

  async function recheck(): Promise<void> {
    if (checking || open.size === 0) return;
    checking = true;
    try {
      const tokenIds = [...new Set([...open].map((s) => s.owner.tokenId))];
      const live = await options.liveTokenIds(tokenIds);
      let ended = 0;
      for (const s of [...open]) {
        if (live.has(s.owner.tokenId)) continue;
        open.delete(s);
        s.end();
        ended++;
      }
      if (ended > 0) log.info({ ended }, 'ended live streams whose token was revoked or expired, or whose workspace was disabled');
    } catch (err) {
      // The next round tries again; a stream is never ended for a failed check.
      log.warn({ err }, 'checking the tokens of open live streams failed');
    } finally {
      checking = false;
    }
  }

  return {
    /**
     * Registers a stream that `end` closes; 429 when the user or the workspace already holds its most. Returns the
     * function that unregisters it (call it when the stream closes for any reason).
     */
    open(owner: StreamOwner, end: () => void): () => void {
      if (count((s) => s.owner.userId === owner.userId) >= maxPerUser) {
        throw new AppError('rate_limited', `You already hold ${maxPerUser} open live streams (with all your tokens); close one first.`);
      }
      if (count((s) => s.owner.workspaceId === owner.workspaceId) >= maxPerWorkspace) {
        throw new AppError('rate_limited', `This workspace already holds ${maxPerWorkspace} open live streams; close one first.`);
      }
      const stream: OpenStream = { owner, end };
      open.add(stream);
      if (!timer) {
        timer = setInterval(() => void recheck(), recheckMs);
        timer.unref();
      }
      return () => {
        open.delete(stream);
        if (open.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },

    /** Open streams, for tests and metrics. */
    get size(): number {
      return open.size;
    },

    /** Ends every open stream (the service stops). */
    stop(): void {
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const s of open) s.end();
      open.clear();
    },
  };
}

export type StreamGuard = ReturnType<typeof createStreamGuard>;
