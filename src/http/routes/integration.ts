/** The Bot Link settings and the test button (docs/interfaces.md: Dashboard API; protocol §1.7, §4.6). Owners and admins only. */
import { AppError } from '../../errors.ts';
import type { IntegrationService } from '../../integration/integration-service.ts';
import { REPLAY_CONCURRENCY, REPLAY_LABELS, REPLAY_MAX_TURNS, REPLAY_VERDICTS, REPLAYS_PER_MINUTE, type ReplayService } from '../../integration/replay.ts';
import { MAX_MESSAGE_CHARS } from '../../limits.ts';
import { exchangeProperties } from '../endpoint-exchange-schema.ts';
import { route, type RouteDefinition } from '../route.ts';

/** What the endpoint's answer broke of the protocol, field by field (a test's and a replayed turn's alike). */
const responseProblems = { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } };
const integrationSchema = {
  type: 'object',
  required: ['endpoint_url', 'tools_base', 'key_hint', 'updated_at'],
  properties: {
    endpoint_url: { type: 'string' },
    tools_base: { type: 'string' },
    key_hint: { type: 'string' },
    updated_at: { type: 'string', format: 'date-time' },
    key: { type: 'string', description: 'Only when a new key was made or given: shown this once.' },
    health: {
      type: 'object',
      description: 'The endpoint health (docs/architecture.md, "Endpoint health"): healthy, degraded (a failure lately), down (failed `down_after.failures` times in a row: turns do not wait; requests are still sent and probed), probing (answering again). Every state but down waits the whole deadline.',
      required: ['state', 'contacted', 'advice', 'since', 'wait_ms', 'deadline_ms', 'down_after', 'consecutive_failures', 'last_problem', 'answer_p99_ms', 'recent', 'probe_interval_ms'],
      properties: {
        state: { type: 'string', enum: ['healthy', 'degraded', 'down', 'probing'] },
        contacted: { type: 'boolean', description: 'false until a request reached (or tried to reach) this URL since it was saved: the dashboard says "Not contacted yet".' },
        advice: { type: ['string', 'null'], description: 'The latest failure in words for the owner, with what to do; null when none was seen.' },
        since: { type: 'string', format: 'date-time' },
        wait_ms: { type: 'object', description: 'How long a turn waits now, ms: the deadline, or 0 while down.', required: ['phone', 'whatsapp'], properties: { phone: { type: 'integer' }, whatsapp: { type: 'integer' } } },
        deadline_ms: { type: 'object', description: 'The deadlines waited in full unless the endpoint is down, ms.', required: ['phone', 'whatsapp'], properties: { phone: { type: 'integer' }, whatsapp: { type: 'integer' } } },
        down_after: {
          type: 'object',
          description: 'What takes the endpoint down: this many failures in a row, each within within_ms of the last.',
          required: ['failures', 'within_ms'],
          properties: { failures: { type: 'integer' }, within_ms: { type: 'integer' } },
        },
        consecutive_failures: { type: 'integer' },
        last_problem: { type: ['string', 'null'] },
        answer_p99_ms: { type: ['integer', 'null'], description: 'p99 of the recent answer times, ms: a figure to watch; it never shortens a wait.' },
        recent: {
          type: 'object',
          required: ['answer', 'invalid', 'timeout', 'connection', 'status_5xx'],
          properties: { answer: { type: 'integer' }, invalid: { type: 'integer' }, timeout: { type: 'integer' }, connection: { type: 'integer' }, status_5xx: { type: 'integer' } },
        },
        probe_interval_ms: { type: 'integer', description: 'While down, how often the endpoint is tried again (a probe), ms.' },
      },
    },
  },
};
const keySchema = { type: 'string', description: 'Own key, at least 32 characters, used as text.' };

const replayAnswerSchema = {
  type: 'object',
  properties: {
    outcome: { enum: ['answer', 'no_answer'] },
    reason: { type: 'string', description: "'answer', or why there was none (status, timeout, not_configured, …)." },
    reply: { type: ['string', 'null'] },
    handled: { type: ['boolean', 'null'] },
    handoff: { enum: ['human', 'forward', null] },
  },
};

export function integrationRoutes(integration: IntegrationService, replay?: ReplayService): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/integration',
      tag: 'integration',
      summary: 'The endpoint URL, the derived tools base, a hint of the key (never the key) and the endpoint health.',
      access: 'manager',
      responses: { 200: { description: 'The integration.', schema: integrationSchema }, 404: { description: 'Not configured.' } },
      async handler({ principal }) {
        return { status: 200, body: await integration.get(principal.workspaceId) };
      },
    }),

    route<{ endpoint_url: string; key?: string }>({
      method: 'put',
      path: '/v1/integration',
      tag: 'integration',
      summary: 'Set the endpoint URL (https, public) and optionally an own key. The first time without a key a 64-character key is generated; later PUTs without a key keep the current one.',
      access: 'manager',
      body: {
        type: 'object',
        required: ['endpoint_url'],
        additionalProperties: false,
        properties: { endpoint_url: { type: 'string', minLength: 1, maxLength: 2048 }, key: keySchema },
      },
      responses: {
        200: { description: 'Saved; `key` only when new.', schema: integrationSchema },
        422: { description: 'The URL is not https and public, or the own key is shorter than 32 characters, too long, or has spaces at an end or control characters.' },
      },
      async handler({ body, principal }) {
        return { status: 200, body: await integration.put(principal.workspaceId, body) };
      },
    }),

    route<{ key?: string }>({
      method: 'post',
      path: '/v1/integration/key',
      tag: 'integration',
      summary: 'Replace the key: the own key given, or a newly generated one; shown once.',
      access: 'manager',
      body: { type: 'object', additionalProperties: false, properties: { key: keySchema } },
      responses: {
        200: { description: 'The new key, this once.', schema: integrationSchema },
        404: { description: 'Not configured.' },
        422: { description: 'The own key is shorter than 32 characters, too long, or has spaces at an end or control characters.' },
      },
      async handler({ body, principal }) {
        return { status: 200, body: await integration.replaceKey(principal.workspaceId, body) };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/integration',
      tag: 'integration',
      summary: 'Disconnect the integrator; the built-in AI answers alone.',
      access: 'manager',
      responses: { 204: { description: 'Removed.' }, 404: { description: 'Not configured.' } },
      async handler({ principal }) {
        await integration.remove(principal.workspaceId);
        return { status: 204 };
      },
    }),

    route({
      method: 'post',
      path: '/v1/integration/tools/test',
      tag: 'integration',
      summary: 'Fetches the tools manifest now (past the cache) and answers the tools and every problem found in it.',
      access: 'manager',
      responses: {
        200: {
          description: 'The manifest as we read it.',
          schema: {
            type: 'object',
            properties: {
              status: { enum: ['ok', 'unavailable'] },
              error: { type: ['string', 'null'] },
              tools: { type: 'array', items: { type: 'object' } },
              problems: { type: 'array', items: { type: 'object', properties: { tool: { type: 'string' }, field: { type: 'string' }, message: { type: 'string' } } } },
              tools_base: { type: 'string' },
              fetched_at: { type: 'string' },
            },
          },
        },
        404: { description: 'Not configured.' },
      },
      async handler({ principal }) {
        return { status: 200, body: await integration.testTools(principal.workspaceId) };
      },
    }),

    route<{ message?: string; language?: string; endpoint_url?: string; key?: string }>({
      method: 'post',
      path: '/v1/integration/test',
      tag: 'integration',
      summary:
        "The test button: sends a 'webchat' channel request and answers exactly what came back. With `endpoint_url`, that URL is tested before it is saved " +
        '(the same https-and-public rules as saving; 422 otherwise), signed with `key` if given, else the saved key, else a temporary key; nothing is saved.',
      access: 'manager',
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          message: { type: 'string', minLength: 1, maxLength: MAX_MESSAGE_CHARS },
          language: { type: 'string', pattern: '^[A-Za-z]{2}([-_][A-Za-z0-9]{1,8})*$' },
          endpoint_url: { type: 'string', minLength: 1, maxLength: 2048, description: 'A URL to test instead of the saved one; not saved.' },
          key: keySchema,
        },
      },
      responses: {
        200: {
          description: 'What the endpoint did.',
          schema: {
            type: 'object',
            properties: {
              ...exchangeProperties,
              response: {},
              problems: responseProblems,
              body_excerpt: { type: 'string' },
              request: { type: 'object' },
              advice: { type: 'string', description: 'What happened and what to do, for the owner.' },
              endpoint_url: { type: 'string', description: 'The URL tested.' },
              signed_with: { enum: ['saved_key', 'given_key', 'temporary_key'] },
            },
          },
        },
        404: { description: 'Nothing saved and no endpoint_url given.' },
        422: { description: 'endpoint_url is not https and public, or key is not a usable own key.' },
      },
      async handler({ body, principal }) {
        return { status: 200, body: await integration.test(principal.workspaceId, body) };
      },
    }),
    ...(replay ? [replayRoute(replay)] : []),
  ];
}

function replayRoute(replay: ReplayService): RouteDefinition {
  return route<{ endpoint_url: string; key?: string; last: number; judge?: boolean }>({
    method: 'post',
    path: '/v1/integration/replay',
    tag: 'integration',
    summary:
      `Replay: the last \`last\` customer messages of phone and WhatsApp conversations (at most ${REPLAY_MAX_TURNS}) are sent, signed, to a candidate endpoint, ` +
      `and each answer is shown beside what the live endpoint answered then: same, changed, now_failing, now_answering or still_failing. ` +
      `The request keeps the stored channel, language and customer phone, with session_id "replay-<the live session id>" and sent_at now; ${REPLAY_CONCURRENCY} conversations at a time. ` +
      `Nothing is written to the conversations. Without \`key\`, the workspace's current key signs. One replay at a time per workspace, at most ${REPLAYS_PER_MINUTE} a minute. ` +
      'With a language model (LLM_BASE_URL), each changed answer is labelled better, worse or equal by the judge, with its reason (`judge: false` leaves it out); ' +
      'without one, the report says the judge needs a model.',
    access: 'manager',
    body: {
      type: 'object',
      required: ['endpoint_url', 'last'],
      additionalProperties: false,
      properties: {
        endpoint_url: { type: 'string', minLength: 1, maxLength: 2048, description: 'The candidate endpoint: https and public, as for PUT /v1/integration.' },
        key: keySchema,
        last: { type: 'integer', minimum: 1, maximum: REPLAY_MAX_TURNS },
        judge: { type: 'boolean', default: true, description: "Label each changed answer better, worse or equal with the workspace's model (default true; nothing is asked without a model)." },
      },
    },
    responses: {
      200: {
        description: 'Each message with both answers, oldest first, and the count per verdict.',
        schema: {
          type: 'object',
          properties: {
            endpoint_url: { type: 'string' },
            requested: { type: 'integer' },
            replayed: { type: 'integer' },
            summary: { type: 'object', properties: Object.fromEntries(REPLAY_VERDICTS.map((v) => [v, { type: 'integer' }])) },
            judge: {
              type: 'object',
              description: 'The judge of the changed answers: how many it labelled worse, better or equal, and how many it could not judge; or why none was judged.',
              properties: {
                status: { enum: ['judged', 'off', 'needs_model'], description: 'judged; off (judge: false); needs_model (the service has no LLM_BASE_URL).' },
                message: { type: ['string', 'null'], description: 'Why nothing was judged, in words; null when judged.' },
                better: { type: 'integer' },
                worse: { type: 'integer' },
                equal: { type: 'integer' },
                not_judged: { type: 'integer', description: 'Changed answers the model could not judge (each item says why).' },
              },
            },
            items: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  turn_id: { type: 'string' },
                  session_id: { type: 'string', format: 'uuid' },
                  channel: { enum: ['phone', 'whatsapp'] },
                  language: { type: 'string' },
                  message: { type: 'string' },
                  at: { type: 'string', format: 'date-time' },
                  verdict: { enum: [...REPLAY_VERDICTS] },
                  live: replayAnswerSchema,
                  candidate: {
                    ...replayAnswerSchema,
                    properties: {
                      ...replayAnswerSchema.properties,
                      http_status: { type: ['integer', 'null'] },
                      latency_ms: { type: 'integer' },
                      problems: responseProblems,
                    },
                  },
                  judge: {
                    description: "A changed answer's label (the candidate's against the live one) with the judge's reason, or why it could not judge; null for the other verdicts or without a judge.",
                    oneOf: [
                      { type: 'object', properties: { label: { enum: [...REPLAY_LABELS] }, reason: { type: 'string' } }, required: ['label', 'reason'] },
                      { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
                      { type: 'null' },
                    ],
                  },
                },
              },
            },
          },
        },
      },
      422: { description: 'The URL is not https and public, the key is not a usable key, or no key was given and the workspace has no integration.' },
      429: { description: 'A replay of this workspace is running, or too many were started this minute; see Retry-After (seconds).' },
    },
    async handler({ body, principal, req, res }) {
      // Who sent the workspace's customer messages where (docs/integrators.md, "Try a new version: replay"): one info
      // line per replay, whatever its outcome. The URL without its query string, which may carry the candidate's token.
      const audit = {
        user_id: principal.userId,
        user_email: principal.email,
        workspace_id: principal.workspaceId,
        target: withoutQuery(body.endpoint_url),
        last: body.last,
      };
      try {
        const report = await replay.replay(principal.workspaceId, body);
        req.log.info({ ...audit, outcome: 'sent', replayed: report.replayed }, 'replay: customer messages sent to a candidate endpoint');
        return { status: 200, body: report };
      } catch (err) {
        req.log.info({ ...audit, outcome: err instanceof AppError ? err.code : 'failed', replayed: 0 }, 'replay: refused or failed before sending');
        if (err instanceof AppError && err.code === 'rate_limited') res.setHeader('Retry-After', String((err.details as { retry_after: number }).retry_after));
        throw err;
      }
    },
  });
}

/** A URL as the audit line keeps it: scheme, host, port and path; not the query string or fragment. */
function withoutQuery(url: string): string {
  return url.split(/[?#]/, 1)[0]!.slice(0, 2_048);
}
