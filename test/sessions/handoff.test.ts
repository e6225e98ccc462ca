import { describe, expect, it } from 'vitest';
import type { HandoffInput } from '../../machines/session-types.ts';
import { connectCall, decideHandoff, type HandoffDeps } from '../../src/sessions/handoff.ts';

function deps(teamAvailable: boolean) {
  const notes: { kind: string; message: string; session_id: string | null }[] = [];
  const d: HandoffDeps = {
    teamAvailable: async () => teamAvailable,
    sessions: {
      addNotification: async (row) => {
        notes.push(row);
      },
    },
  };
  return { d, notes };
}

const base: HandoffInput = { workspaceId: 'w', channel: 'phone', kind: 'human', requestedBy: 'integrator', language: 'nl', message: 'Ik wil iemand spreken', reply: '', conversationId: 'CA-call-1' };

describe('the handoff rule (protocol §2.2), said once in the conversation language', () => {
  it('phone, human, team available: connected, and the Dutch sentence when the reply does not say it', async () => {
    const { d, notes } = deps(true);
    expect(await decideHandoff(d, base, 's')).toEqual({ kind: 'human', connected: true, sentence: 'Ik verbind u door met een collega.', requestedBy: 'integrator' });
    expect(notes).toEqual([]);
  });

  it('phone, human, team available: nothing added when the reply already announces it', async () => {
    const { d } = deps(true);
    const result = await decideHandoff(d, { ...base, reply: 'Ik verbind je door met een collega.' }, 's');
    expect(result).toMatchObject({ connected: true, sentence: '' });
  });

  it('phone, human, team not available: the reply promised a person, so the caller is told the team follows up', async () => {
    const { d, notes } = deps(false);
    const result = await decideHandoff(d, { ...base, reply: 'Ik verbind je door met een collega.' }, 's');
    expect(result).toMatchObject({ connected: false, sentence: 'Het team is nu niet bereikbaar; zij nemen later contact met u op.' });
    expect(notes).toMatchObject([{ kind: 'human_followup', message: 'Ik wil iemand spreken', session_id: 's' }]);
  });

  it('WhatsApp, forward, English: one English sentence; none when the reply says the team follows up', async () => {
    const { d, notes } = deps(true);
    const request = { ...base, channel: 'whatsapp' as const, kind: 'forward' as const, language: 'en' };
    expect((await decideHandoff(d, { ...request, reply: 'Your order is late.' }, 's')).sentence).toBe('The team will follow up with you.');
    expect((await decideHandoff(d, { ...request, reply: 'Our team will get back to you tomorrow.' }, 's')).sentence).toBe('');
    expect(notes.map((n) => n.kind)).toEqual(['forward', 'forward']);
  });

  it('a customer pressing 0 is named in the team notification', async () => {
    const { d, notes } = deps(false);
    await decideHandoff(d, { ...base, requestedBy: 'customer', message: '0' }, 's');
    expect(notes[0]?.message).toBe('The caller pressed 0 to speak to a person.');
  });

  it('a customer asking in words is named with their words: on the phone as the caller, elsewhere as the customer', async () => {
    const { d, notes } = deps(false);
    await decideHandoff(d, { ...base, requestedBy: 'customer', message: 'Ik wil iemand spreken' }, 's');
    await decideHandoff(d, { ...base, channel: 'whatsapp', requestedBy: 'customer', message: 'Can I speak to a real person please?' }, 's');
    expect(notes.map((n) => n.message)).toEqual(['The caller asked for a person. Ik wil iemand spreken', 'The customer asked for a person. Can I speak to a real person please?']);
  });
});

describe('a connected call asks the handoff rule whom to dial (protocol §2.2)', () => {
  const call = { workspaceId: 'w', sessionRowId: 's', language: 'nl', transferNumber: '+31201234567' };

  it('the team is available and a transfer number is set: dial it, no notification', async () => {
    const { d, notes } = deps(true);
    expect(await connectCall(d, call)).toEqual({ dial: '+31201234567' });
    expect(notes).toEqual([]);
  });

  it('the team went away since the promise: the follow-up sentence in the call language and a notification', async () => {
    const { d, notes } = deps(false);
    expect(await connectCall(d, call)).toEqual({ sentence: 'Het team is nu niet bereikbaar; zij nemen later contact met u op.' });
    expect(notes).toMatchObject([{ kind: 'human_followup', session_id: 's', message: 'The caller was to be connected, but the team was no longer available.' }]);
  });

  it('no transfer number: the team follows up, and the notification says what to set', async () => {
    const { d, notes } = deps(true);
    expect(await connectCall(d, { ...call, transferNumber: null, language: 'en' })).toEqual({ sentence: expect.stringMatching(/team/i) });
    expect(notes[0]?.message).toContain('PUT /v1/phone');
  });
});
