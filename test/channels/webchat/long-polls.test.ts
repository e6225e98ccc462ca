/**
 * The long polls' places and wake-ups on their own (src/channels/webchat/long-polls.ts; docs/webchat.md, "Long polls"):
 * a change of another session wakes nobody, one subscription per workspace outlives its last poll by the linger, and a
 * poll begun while its workspace's watch was new reads once more when the watch has settled.
 */
import { describe, expect, it } from 'vitest';
import { createLongPolls } from '../../../src/channels/webchat/long-polls.ts';
import type { InboxChange, InboxListener } from '../../../src/sessions/inbox-events.ts';

function fakeInbox() {
  const listeners = new Map<string, Set<InboxListener>>();
  let subscriptions = 0;
  return {
    subscribe(workspaceId: string, listener: InboxListener) {
      subscriptions++;
      let set = listeners.get(workspaceId);
      if (!set) listeners.set(workspaceId, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
    change(workspaceId: string, sessionId: string) {
      for (const l of listeners.get(workspaceId) ?? []) l({ workspaceId, sessionId, reason: 'message' } as InboxChange);
    },
    listening: (workspaceId: string) => listeners.get(workspaceId)?.size ?? 0,
    get subscriptions() {
      return subscriptions;
    },
  };
}

const owner = (sessionId: string, address = '127.0.0.1') => ({ workspaceId: 'w1', conversationId: `c-${sessionId}`, sessionId, address });

describe('long polls', () => {
  it("a change of the poll's session wakes it; another session's does not", async () => {
    const inbox = fakeInbox();
    const polls = createLongPolls({ inbox, settleMs: 0 });
    const mine = polls.open(owner('s1'));
    const waiting = mine.wait(Date.now() + 2_000);
    inbox.change('w1', 's2');
    inbox.change('w2', 's1');
    const first = await Promise.race([waiting, new Promise((r) => setTimeout(() => r('still waiting'), 100))]);
    expect(first).toBe('still waiting');
    inbox.change('w1', 's1');
    expect(await waiting).toBe('changed');
    // A change while the poll was reading is answered by its next wait at once.
    inbox.change('w1', 's1');
    expect(await mine.wait(Date.now() + 2_000)).toBe('changed');
    mine.close();
  });

  it('waits until the deadline, or until the client leaves', async () => {
    const polls = createLongPolls({ inbox: fakeInbox(), settleMs: 0 });
    const poll = polls.open(owner('s1'));
    expect(await poll.wait(Date.now() + 50)).toBe('deadline');
    const left = new AbortController();
    const waiting = poll.wait(Date.now() + 5_000, left.signal);
    left.abort();
    expect(await waiting).toBe('aborted');
    poll.close();
    expect(polls.size).toBe(0);
  });

  it('a poll begun while the watch was new is woken once when it settled', async () => {
    const polls = createLongPolls({ inbox: fakeInbox(), settleMs: 150 });
    const poll = polls.open(owner('s1'));
    const deadline = Date.now() + 1_000;
    expect(await poll.wait(deadline)).toBe('settled');
    expect(await poll.wait(deadline)).toBe('deadline');
    poll.close();
  });

  it('one subscription per workspace, kept for the linger after the last poll, then dropped', async () => {
    const inbox = fakeInbox();
    const polls = createLongPolls({ inbox, lingerMs: 100, settleMs: 0 });
    const a = polls.open(owner('s1'));
    const b = polls.open(owner('s2', '127.0.0.2'));
    expect([inbox.subscriptions, inbox.listening('w1')]).toEqual([1, 1]);
    a.close();
    b.close();
    polls.open(owner('s3')).close();
    expect(inbox.subscriptions).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(inbox.listening('w1')).toBe(0);
  });

  it('refuses beyond the caps (429 rate_limited with retry_after_seconds), and frees a place on close', () => {
    const polls = createLongPolls({ inbox: fakeInbox(), maxPerConversation: 2, maxPerAddress: 3 });
    const held = [polls.open(owner('s1')), polls.open(owner('s1'))];
    expect(() => polls.open(owner('s1', '127.0.0.9'))).toThrow(expect.objectContaining({ code: 'rate_limited', details: { retry_after_seconds: expect.any(Number) } }));
    held.push(polls.open(owner('s2')));
    expect(() => polls.open(owner('s3'))).toThrow(/address/);
    held[0]!.close();
    held[0]!.close();
    expect(polls.size).toBe(2);
    held.push(polls.open(owner('s3')));
    for (const p of held) p.close();
    expect(polls.size).toBe(0);
  });
});
