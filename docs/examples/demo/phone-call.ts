/**
 * A phone call, played by a `ws` client in the role of the telephony bridge: Twilio ConversationRelay's frames
 * (docs/phone.md, "A call, frame by frame"). The caller asks about an order, barges in over a pending answer, and asks
 * for a person; the team is available, so the call ends with a human handoff that Twilio would dial.
 */
import { once } from 'node:events';
import WebSocket from 'ws';
import type { Api, Transcript } from './transcript.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Frame = Record<string, any>;

export interface PhoneCallSettings {
  serviceUrl: string;
  bridgeToken: string;
  /** The workspace's number (PUT /v1/phone), the call's `to`. */
  number: string;
  quick: boolean;
}

export interface PhoneCallResult {
  answered: boolean;
  bargeIn: boolean;
  handoff: boolean;
}

/** Twilio's side of one call. */
class Bridge {
  readonly #frames: Frame[] = [];
  #wake: (() => void) | null = null;
  readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      this.#frames.push(JSON.parse(String(data)) as Frame);
      this.#wake?.();
    });
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  say(text: string): void {
    this.send({ type: 'prompt', voicePrompt: text, lang: 'en-US', last: true });
  }

  /** The next frame that matches (frames before it are dropped). */
  async next(match: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.#frames.findIndex(match);
      if (i >= 0) return this.#frames.splice(0, i + 1).at(-1)!;
      if (Date.now() > deadline) throw new Error(`the bridge got no matching frame within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The answer's text: the talk cycle up to `last: true`, fillers (preemptible) left out. */
  async answer(): Promise<string> {
    let text = '';
    for (;;) {
      const frame = await this.next((f) => f.type === 'text' && !f.preemptible);
      text += String(frame.token);
      if (frame.last) return text.trim();
    }
  }
}

export async function playPhoneCall(transcript: Transcript, api: Api, settings: PhoneCallSettings): Promise<PhoneCallResult> {
  const result: PhoneCallResult = { answered: false, bargeIn: false, handoff: false };
  const callSid = `CAdemo${Date.now().toString(16)}`;
  const from = '+31612345678';
  const ws = new WebSocket(`${settings.serviceUrl.replace(/^http/, 'ws')}/v1/phone/ws`, { headers: { authorization: `Bearer ${settings.bridgeToken}` } });
  await once(ws, 'open');
  const bridge = new Bridge(ws);
  transcript.line('phone', `call ${callSid} from ${from} to ${settings.number} (a ConversationRelay bridge on /v1/phone/ws)`);
  bridge.send({ type: 'setup', sessionId: `VX${callSid}`, accountSid: 'ACdemo', callSid, from, to: settings.number, direction: 'inbound', customParameters: {} });

  const ask = async (text: string): Promise<string> => {
    transcript.customer('phone', text);
    bridge.say(text);
    return bridge.answer();
  };
  const session = async () => {
    const id = await transcript.sessionOf('phone', callSid);
    if (!id) throw new Error(`no phone session for call ${callSid}`);
    return id;
  };

  try {
    // 1. An order question: the integrator answers it itself (handled).
    const first = await ask('Where is order 1001? The postcode is 3511 AB.');
    const id = await session();
    result.answered = (await transcript.tellTurns('phone', id, first)).some((t) => t.status === 'completed' && t.reply);

    // 2. Not an order question: the integrator says handled false, and the AI calls the shop's opening_hours tool.
    if (!settings.quick) await transcript.tellTurns('phone', id, await ask('When are you open on Saturday?'));

    // 3. Barge-in: the caller speaks again before the first answer came; the first turn is cancelled, never spoken.
    transcript.customer('phone', 'Do you sell tents?');
    bridge.say('Do you sell tents?');
    const second = 'Actually, do you have hiking boots in size 42?';
    transcript.customer('phone', second, ' (barging in before the answer)');
    bridge.say(second);
    const turns = await transcript.tellTurns('phone', id, await bridge.answer());
    result.bargeIn = turns.some((t) => t.status === 'cancelled') && turns.some((t) => t.status === 'completed');

    // 4. A person, please: the caller asks in words, Botlink hands over itself (the integrator is not asked), the team
    //    switch is on, the call is handed over.
    transcript.customer('phone', 'Can I speak to someone about a return?');
    bridge.say('Can I speak to someone about a return?');
    const heard = await bridge.answer();
    const end = await bridge.next((f) => f.type === 'end');
    const handoffData = JSON.parse(String(end.handoffData ?? '{}')) as { reason?: string };
    await transcript.tellTurns('phone', id, heard);
    transcript.line('phone', `end frame: handoffData ${String(end.handoffData)}`);
    // What Twilio does next: it asks our action URL, which dials the transfer number while the team is available.
    const action = await api('POST', '/v1/phone/twilio/action', { form: { CallSid: callSid, From: from, To: settings.number, HandoffData: String(end.handoffData) } });
    const dial = /<Dial[^>]*>([^<]+)<\/Dial>/.exec(action.text)?.[1];
    transcript.line('phone', `Twilio asks /v1/phone/twilio/action → ${dial ? `<Dial>${dial}</Dial>: the caller is put through` : action.text}`);
    result.handoff = handoffData.reason === 'human' && dial !== undefined;
  } finally {
    ws.close();
  }
  return result;
}
