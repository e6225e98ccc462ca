/**
 * The TwiML documents the phone routes answer (Twilio's voice XML; Telnyx's TeXML reads the same). Built as strings
 * with every attribute and text escaped: numbers and greetings come from workspace settings.
 */

export interface ConnectOptions {
  /** wss:// URL of GET /v1/phone/ws. */
  websocketUrl: string;
  /** Where Twilio asks what to do when the relay session ends (POST /v1/phone/twilio/action). */
  actionUrl: string;
  /** BCP 47, for speech recognition and text-to-speech. */
  language: string;
  /** Spoken by Twilio as soon as the call is connected; absent on a reconnect. */
  welcomeGreeting?: string | null;
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function document(body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;
}

/** Connects the call to our WebSocket; `dtmfDetection` so key presses reach us as dtmf frames. */
export function connectTwiml(o: ConnectOptions): string {
  const greeting = o.welcomeGreeting ? ` welcomeGreeting="${escapeXml(o.welcomeGreeting)}"` : '';
  return document(
    `<Connect action="${escapeXml(o.actionUrl)}">` +
      `<ConversationRelay url="${escapeXml(o.websocketUrl)}" language="${escapeXml(o.language)}" dtmfDetection="true" interruptible="any"${greeting} />` +
      `</Connect>`,
  );
}

/** Hands the call to a person at `number` (E.164). */
export function dialTwiml(number: string): string {
  return document(`<Dial>${escapeXml(number)}</Dial>`);
}

/** Says one sentence, then hangs up. */
export function sayAndHangUpTwiml(sentence: string, language: string | null): string {
  const lang = language ? ` language="${escapeXml(language)}"` : '';
  return document(`<Say${lang}>${escapeXml(sentence)}</Say><Hangup/>`);
}

export function hangUpTwiml(): string {
  return document('<Hangup/>');
}
