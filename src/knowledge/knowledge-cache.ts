/**
 * What the knowledge service (./knowledge-service.ts) keeps per process for its searches: whether a workspace has any
 * knowledge, as last seen, and each workspace's vocabulary as last read, both forgotten when this process writes.
 */
import type { KnowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { KNOWLEDGE_PRESENCE_TTL_MS, MAX_KNOWLEDGE_PRESENCE_ENTRIES, MAX_VOCABULARY_WORDS, MAX_VOCABULARY_WORKSPACES, VOCABULARY_CHECK_MS } from './limits.ts';
import { Vocabulary } from './vocabulary.ts';

/**
 * `changed`: told after a write to a workspace's knowledge got through (the mark its saved checks are run again from,
 * src/scenarios/knowledge-rechecks.ts); it never fails the write.
 */
export function createKnowledgeCache(knowledge: KnowledgeRepository, now: () => Date, changed?: (workspaceId: string) => Promise<void>) {
  /**
   * Whether a workspace has any knowledge, as last seen (KNOWLEDGE_PRESENCE_TTL_MS): a workspace without pages skips
   * the search, which on the phone runs on every turn. `generation` counts this process's writes per workspace, so a
   * look that started before a write cannot store what it saw after the write.
   */
  const presence = new Map<string, { has: boolean; at: number }>();
  /**
   * Each workspace's vocabulary as last read, with the knowledge's version it was read at. A search uses what is
   * there and never waits for a read (the first question after a start goes without typo correction); the version is
   * looked at again after VOCABULARY_CHECK_MS, or at once after this process wrote, and the words are read again
   * only when it changed.
   */
  const vocabularies = new Map<string, { vocabulary: Vocabulary | null; version: string | null; checkedAt: number; loading: Promise<void> | null }>();
  function refreshVocabulary(workspaceId: string): Promise<void> {
    let entry = vocabularies.get(workspaceId);
    if (!entry) {
      entry = { vocabulary: null, version: null, checkedAt: 0, loading: null };
      vocabularies.set(workspaceId, entry);
      if (vocabularies.size > MAX_VOCABULARY_WORKSPACES) vocabularies.delete(vocabularies.keys().next().value!);
    }
    const target = entry;
    if (target.loading) return target.loading;
    target.loading = (async () => {
      try {
        const version = await knowledge.version(workspaceId);
        if (version !== target.version || target.vocabulary === null) {
          const read = await knowledge.vocabulary(workspaceId, MAX_VOCABULARY_WORDS);
          target.vocabulary = new Vocabulary(read.entries, read.totalChunks, read.entries.length < MAX_VOCABULARY_WORDS, read.languages);
          target.version = version;
        }
      } catch {
        // Kept as it was: typo correction and word weights wait for the next look.
      } finally {
        target.checkedAt = now().getTime();
        target.loading = null;
      }
    })();
    return target.loading;
  }
  function vocabularyOf(workspaceId: string): Vocabulary | undefined {
    const entry = vocabularies.get(workspaceId);
    if (!entry || now().getTime() - entry.checkedAt >= VOCABULARY_CHECK_MS) void refreshVocabulary(workspaceId);
    if (entry) {
      // Most recently used last, so the oldest unused workspace goes first.
      vocabularies.delete(workspaceId);
      vocabularies.set(workspaceId, entry);
    }
    return entry?.vocabulary ?? undefined;
  }
  const generation = new Map<string, number>();
  function forget(workspaceId: string): void {
    presence.delete(workspaceId);
    const known = vocabularies.get(workspaceId);
    if (known) known.checkedAt = 0;
    generation.set(workspaceId, (generation.get(workspaceId) ?? 0) + 1);
    if (generation.size > MAX_KNOWLEDGE_PRESENCE_ENTRIES) generation.delete(generation.keys().next().value!);
  }
  /**
   * One look per workspace at a time: after the presence time every turn looked itself, some hundreds of statements
   * every 10 s at 500 phone turns/s, queued in the pool ahead of the turn writes. A look that started
   * before a write is not shared with a turn that comes after it.
   */
  const looking = new Map<string, { generation: number | undefined; look: Promise<boolean> }>();
  async function hasKnowledge(workspaceId: string): Promise<boolean> {
    const at = now().getTime();
    const seen = presence.get(workspaceId);
    if (seen && at - seen.at < KNOWLEDGE_PRESENCE_TTL_MS) return seen.has;
    const before = generation.get(workspaceId);
    const running = looking.get(workspaceId);
    if (running && running.generation === before) return running.look;
    const look = (async () => {
      const has = await knowledge.hasChunks(workspaceId);
      if (generation.get(workspaceId) === before) {
        presence.delete(workspaceId); // re-inserted last: the map's order is the order of looks, oldest first
        presence.set(workspaceId, { has, at });
        if (presence.size > MAX_KNOWLEDGE_PRESENCE_ENTRIES) presence.delete(presence.keys().next().value!);
      }
      return has;
    })();
    const entry = { generation: before, look };
    looking.set(workspaceId, entry);
    try {
      return await look;
    } finally {
      if (looking.get(workspaceId) === entry) looking.delete(workspaceId);
    }
  }
  /** A write's effect on presence: forgotten once it has committed (or failed), so the next search looks again. */
  async function writing<T>(workspaceId: string, work: () => Promise<T>): Promise<T> {
    let done: T;
    try {
      done = await work();
    } finally {
      forget(workspaceId);
    }
    // After the commit, before the write is answered: a write acknowledged has its mark (docs/scenarios.md).
    await changed?.(workspaceId);
    return done;
  }

  return { refreshVocabulary, vocabularyOf, hasKnowledge, writing };
}
