/**
 * A test scenario's shape (docs/scenarios.md; docs/interfaces.md, "Scenarios"): the one JSON Schema that the API
 * validates with Ajv (POST and PUT /v1/scenarios), /openapi.json describes, and the CLI checks each file against before
 * it sends anything. What a schema cannot say (a pattern that compiles and is safe to run, the parts that need a model)
 * is checked in scenario-check.ts.
 */
import type { JsonSchema } from '../http/route.ts';
import {
  MAX_CRITERION_CHARS,
  MAX_EXPECTED_TEXT_CHARS,
  MAX_EXPECTED_TEXTS,
  MAX_LATENCY_CEILING_MS,
  MAX_JUDGE_CRITERIA,
  MAX_PATTERN_CHARS,
  MAX_PERSONA_GOAL_CHARS,
  MAX_PERSONA_STYLE_CHARS,
  MAX_PERSONA_TURNS,
  MAX_SCENARIO_MESSAGE_CHARS,
  MAX_SCENARIO_NAME_CHARS,
  MAX_SCENARIO_RUNS,
  MAX_SCENARIO_TURNS,
  MAX_TOOL_MOCKS,
  DEFAULT_PERSONA_TURNS,
} from './limits.ts';

export const SCENARIO_CHANNELS = ['webchat', 'whatsapp', 'phone'] as const;
export const EXPECTED_SOURCES = ['integrator', 'knowledge_base', 'ai', 'fallback'] as const;

export interface ScenarioExpect {
  /** Each text is in the reply (whatever the capitals). */
  contains?: string[];
  /** None of these texts is in the reply (whatever the capitals). */
  not_contains?: string[];
  /** A JavaScript regular expression (flag `u`) the reply matches somewhere. */
  matches?: string;
  /** Who answered. */
  source?: (typeof EXPECTED_SOURCES)[number];
  /** A handoff happened (true), did not (false), or one of this kind did. */
  handoff?: boolean | 'human' | 'forward';
  /** The AI called this tool in the turn; each key of `args` given deep-equals the call's. */
  tool?: { name: string; args?: Record<string, unknown> };
  /** The reply came within this many milliseconds of the message. */
  max_ms?: number;
}

export interface ScenarioTurn {
  customer: string;
  expect?: ScenarioExpect;
}

export interface Scenario {
  name: string;
  channel: (typeof SCENARIO_CHANNELS)[number];
  language?: string;
  customer?: { phone?: string; email?: string; name?: string };
  /** Whom the Bot Link asks: the workspace's endpoint (default), nobody, or a candidate endpoint. */
  integrator?: 'live' | 'none' | { url: string };
  mocks?: { tools?: Record<string, unknown> };
  runs?: number;
  /** Scripted customer messages; a scenario with a persona may have none (the simulated customer speaks after them). */
  turns?: ScenarioTurn[];
  /** Criteria the workspace's model judges after each play (src/scenarios/judge.ts). */
  judge?: { criteria: string[] };
  /** A simulated customer played by the workspace's model after the scripted turns (./simulated-customer.ts). */
  persona?: Persona;
}

/** What the play of a simulated customer must show, over its own turns (docs/scenarios.md, "Simulated customers"). */
export interface PersonaExpect {
  /** The customer said the goal was reached (true, the default), or did not (false: a customer who must not get their way). */
  goal_reached?: boolean;
  /** A handoff happened in one of the simulated turns (true, or of this kind), or in none (false). */
  handoff?: boolean | 'human' | 'forward';
  /** One of the simulated turns was answered by this source. */
  source?: (typeof EXPECTED_SOURCES)[number];
}

export interface Persona {
  /** What the customer wants, in the owner's words. */
  goal: string;
  /** How the customer writes or speaks (impatient, brief, many questions). */
  style?: string;
  /** The customer's messages at most (default DEFAULT_PERSONA_TURNS). */
  max_turns?: number;
  expect?: PersonaExpect;
}

const text = (maxLength: number, description?: string): JsonSchema => ({ type: 'string', minLength: 1, maxLength, ...(description ? { description } : {}) });
const texts = (description: string): JsonSchema => ({ type: 'array', maxItems: MAX_EXPECTED_TEXTS, items: text(MAX_EXPECTED_TEXT_CHARS), description });
const TOOL_NAME = '^[A-Za-z0-9_-]{1,64}$';

const expectSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description: "What the turn's reply must show; every expectation given must hold.",
  properties: {
    contains: texts(`Each text is in the reply, whatever the capitals (at most ${MAX_EXPECTED_TEXTS}).`),
    not_contains: texts('None of these texts is in the reply, whatever the capitals.'),
    matches: text(MAX_PATTERN_CHARS, `A JavaScript regular expression (flag u; (?i:…) for no case) found in the reply; at most ${MAX_PATTERN_CHARS} characters, nested repetition refused.`),
    source: { enum: [...EXPECTED_SOURCES], description: 'Who answered the turn.' },
    handoff: { enum: [true, false, 'human', 'forward'], description: 'A handoff happened (true), none did (false), or one of this kind.' },
    tool: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      description: 'The AI called this tool during the turn; each key of args given equals the call\'s (deeply).',
      properties: { name: { type: 'string', pattern: TOOL_NAME }, args: { type: 'object' } },
    },
    max_ms: { type: 'integer', minimum: 1, maximum: MAX_LATENCY_CEILING_MS, description: 'The reply came within this many milliseconds of the message.' },
  },
};

/** The scenario, as a file and as the API's body. */
export const scenarioSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  // Scripted turns, a simulated customer, or both (its messages come after the scripted ones); neither is a 422 from
  // scenario-check.ts, not an anyOf here: a schema's anyOf would name both as missing, and the generators that read
  // the document (test/http/openapi-fuzz.test.ts) merge an anyOf branch shallowly over its parent.
  required: ['name', 'channel'],
  properties: {
    name: text(MAX_SCENARIO_NAME_CHARS, 'One per workspace: the CLI creates or updates scenarios by name.'),
    channel: { enum: [...SCENARIO_CHANNELS] },
    language: { type: 'string', pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$', maxLength: 35, description: "The page's language (web chat) or the caller's (phone), for a message too short to tell; WhatsApp tells it from the words only." },
    customer: {
      type: 'object',
      additionalProperties: false,
      description: "The test customer. phone: the caller or the WhatsApp number (default +15555550100); email and name: on the test conversation from its start (its transcript's customer).",
      properties: {
        phone: { type: 'string', pattern: '^\\+?[0-9][0-9 ().-]{2,31}$' },
        email: { type: 'string', format: 'email', maxLength: 254 },
        name: text(120),
      },
    },
    integrator: {
      description: 'live: the workspace\'s endpoint (the default); none: the Bot Link is not asked; {url}: a candidate endpoint, signed with the workspace\'s key.',
      oneOf: [
        { enum: ['live', 'none'] },
        { type: 'object', additionalProperties: false, required: ['url'], properties: { url: { type: 'string', format: 'uri', maxLength: 2048 } } },
      ],
    },
    mocks: {
      type: 'object',
      additionalProperties: false,
      properties: {
        tools: {
          type: 'object',
          maxProperties: MAX_TOOL_MOCKS,
          propertyNames: { pattern: TOOL_NAME },
          description: 'Tools answered without calling the integrator: name → the result the AI is given (offered even when the manifest lacks them).',
        },
      },
    },
    runs: { type: 'integer', minimum: 1, maximum: MAX_SCENARIO_RUNS, description: 'How many times a run plays it (default 1).' },
    turns: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_SCENARIO_TURNS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['customer'],
        properties: { customer: text(MAX_SCENARIO_MESSAGE_CHARS, "The customer's message."), expect: expectSchema },
      },
      description: 'The customer\'s scripted messages, each with what its reply must show. Required unless a persona writes the messages (422 without either).',
    },
    judge: {
      type: 'object',
      additionalProperties: false,
      required: ['criteria'],
      description: "A rubric judged by the workspace's model after each play: a verdict with a reason per criterion (422 without a model).",
      properties: {
        criteria: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_JUDGE_CRITERIA,
          uniqueItems: true,
          items: text(MAX_CRITERION_CHARS),
          description: `What the bot's side of the conversation must do, one criterion a text (at most ${MAX_JUDGE_CRITERIA}, each at most ${MAX_CRITERION_CHARS} characters).`,
        },
      },
    },
    persona: {
      type: 'object',
      additionalProperties: false,
      required: ['goal'],
      description:
        "A simulated customer played by the workspace's model (422 without one), after the scripted turns if any: it writes each next message " +
        'from its goal, its style, the channel, the language and the conversation so far, and says when the goal is reached or given up.',
      properties: {
        goal: text(MAX_PERSONA_GOAL_CHARS, 'What the customer wants ("find out when order 1001 ships, giving the postcode when asked").'),
        style: text(MAX_PERSONA_STYLE_CHARS, 'How the customer writes or speaks ("impatient, short messages, a typo now and then").'),
        max_turns: { type: 'integer', minimum: 1, maximum: MAX_PERSONA_TURNS, description: `The customer's messages at most (default ${DEFAULT_PERSONA_TURNS}).` },
        expect: {
          type: 'object',
          additionalProperties: false,
          description: "What the simulated part of a play must show: checked over the customer's own turns.",
          properties: {
            goal_reached: { type: 'boolean', description: 'true (the default): the customer said the goal was reached; false: it must not be (a customer who must not get their way).' },
            handoff: { enum: [true, false, 'human', 'forward'], description: 'A handoff happened in one of the simulated turns (true, or of this kind), or in none (false).' },
            source: { enum: [...EXPECTED_SOURCES], description: 'One of the simulated turns was answered by this source.' },
          },
        },
      },
    },
  },
};
