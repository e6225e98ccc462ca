/**
 * The demo's transcript: who said what, and, read back from the session API (`GET /v1/sessions/{id}`, the same data
 * the dashboard shows), which source answered, the bot link's verdict, tool calls, latencies and handoffs.
 */

/** The demo's client of Botlink's HTTP API. */
export type Api = (method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string>; form?: Record<string, string> }) => Promise<{ status: number; body: any; text: string }>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function apiClient(baseUrl: string): Api {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  };
}

/** One turn as `GET /v1/sessions/{id}` shows it (the fields the transcript reads). */
export interface SessionTurn {
  ordinal: number;
  status: 'completed' | 'cancelled';
  customer_message: string;
  reply: string | null;
  source: string | null;
  botlink: { outcome: string; reason: string; handled: boolean | null; handoff: string | null; latencyMs: number } | null;
  tool_rounds: { calls: { id: string; name: string; args: unknown }[]; outcomes: { id: string; ok: boolean; latencyMs: number; failure?: string }[] }[];
  handoff: { kind: string; connected: boolean; requestedBy?: string } | null;
  started_at: string;
  ended_at: string;
}

export type Channel = 'phone' | 'whatsapp' | 'webchat';

/** The customer of each channel, as the transcript names them. */
const CUSTOMER: Record<Channel, string> = { phone: 'caller', whatsapp: 'customer', webchat: 'visitor' };

export class Transcript {
  readonly lines: string[] = [];
  readonly #log: (line: string) => void;
  readonly #api: Api;
  readonly #token: string;
  /** The last turn already told, per session. */
  readonly #told = new Map<string, number>();

  constructor(log: (line: string) => void, api: Api, token: string) {
    this.#log = log;
    this.#api = api;
    this.#token = token;
  }

  line(tag: string, text: string): void {
    const line = `[${tag}] ${text}`;
    this.lines.push(line);
    this.#log(line);
  }

  customer(channel: Channel, text: string, note = ''): void {
    this.line(channel, `${CUSTOMER[channel]}${note}: ${text}`);
  }

  /** The id of the session whose session_id (call sid, conversation id) is `sessionId`, or the newest of the channel. */
  async sessionOf(channel: Channel, sessionId?: string): Promise<string | undefined> {
    const res = await this.#api('GET', `/v1/sessions?channel=${channel}`, { token: this.#token });
    const sessions = (res.body?.sessions ?? []) as { id: string; session_id: string }[];
    return (sessionId ? sessions.find((s) => s.session_id === sessionId) : sessions[0])?.id;
  }

  /**
   * Waits until the session has a finished turn after the last one told, then tells every new turn: cancelled ones,
   * tool calls, and the answer `heard` by the customer with its source and latency. Returns the new turns.
   */
  async tellTurns(channel: Channel, id: string, heard: string, timeoutMs = 10_000): Promise<SessionTurn[]> {
    const after = this.#told.get(id) ?? 0;
    const deadline = Date.now() + timeoutMs;
    let turns: SessionTurn[];
    for (;;) {
      const res = await this.#api('GET', `/v1/sessions/${id}`, { token: this.#token });
      turns = ((res.body?.turns ?? []) as SessionTurn[]).filter((t) => t.ordinal > after).sort((a, b) => a.ordinal - b.ordinal);
      if (turns.some((t) => t.status === 'completed')) break;
      if (Date.now() > deadline) {
        this.line(channel, `botlink: ${heard} (its turn was not in the session API within ${timeoutMs} ms)`);
        return [];
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const turn of turns) {
      this.#told.set(id, Math.max(this.#told.get(id) ?? 0, turn.ordinal));
      if (turn.status === 'cancelled') {
        this.line(channel, `turn ${turn.ordinal} ("${turn.customer_message}") cancelled by the barge-in: its answer was never sent`);
        continue;
      }
      for (const round of turn.tool_rounds) {
        for (const call of round.calls) {
          const outcome = round.outcomes.find((o) => o.id === call.id);
          const verdict = outcome ? `${outcome.ok ? 'ok' : `failed (${outcome.failure ?? 'error'})`}, ${Math.round(outcome.latencyMs)} ms` : 'no result';
          this.line('tools', `${call.name} ${JSON.stringify(call.args)} → ${verdict}`);
        }
      }
      const ms = Date.parse(turn.ended_at) - Date.parse(turn.started_at);
      // A turn that was only the handoff (the customer asked for a person) has no answer and no source.
      const source = turn.source ?? (turn.handoff ? 'handoff' : 'no source');
      this.line(channel, `botlink (${source}, ${ms} ms${botlinkNote(turn)}): ${heard}`);
      if (turn.handoff) {
        const who = turn.handoff.requestedBy === 'customer' ? 'the customer asked' : 'the integrator asked';
        this.line('handoff', `${channel}: ${turn.handoff.kind} (${who}), ${turn.handoff.connected ? 'connected now' : 'the team follows up'}`);
      }
    }
    return turns;
  }
}

/** What the bot link said, when the integrator did not answer the turn itself. */
function botlinkNote(turn: SessionTurn): string {
  const b = turn.botlink;
  if (!b || turn.source === 'integrator') return '';
  if (b.outcome === 'answer') return `; integrator: handled ${String(b.handled)}`;
  return `; integrator: ${b.reason}`;
}
