/**
 * Configuration: read from the environment once at start, validated with Ajv (fastify's initial-config-validation
 * style), defaults in one place, then frozen. A wrong setting stops the start with one sentence that names it.
 */
import { isIP } from 'node:net';
import { Ajv } from 'ajv';
import { ConfigError } from './errors.ts';
import { LEASE_MS, MIN_LEASE_MS } from './leases/durations.ts';

/** A workspace's websites keep this many pages together unless KNOWLEDGE_MAX_PAGES says otherwise. */
export const DEFAULT_KNOWLEDGE_MAX_PAGES = 500;

/** "Available" lapses to "away" after this many minutes without an open dashboard, unless PRESENCE_IDLE_MINUTES says otherwise. */
export const DEFAULT_PRESENCE_IDLE_MINUTES = 5;
/** The most open conversations (held or assigned) the assignment gives one person, unless ASSIGN_MAX_PER_AGENT says otherwise. */
export const DEFAULT_ASSIGN_MAX_PER_AGENT = 10;
/** A conversation waiting longer than this many minutes is overdue, unless FIRST_REPLY_TARGET_MINUTES says otherwise. */
export const DEFAULT_FIRST_REPLY_TARGET_MINUTES = 5;
/** A web chat visitor is gone (an agent's reply is also emailed) after this many minutes without an open widget, unless VISITOR_GONE_MINUTES says otherwise. */
export const DEFAULT_VISITOR_GONE_MINUTES = 3;

/** Each setting: its JSON Schema over the raw string and the sentence shown when it is wrong. */
const settings = {
  PORT: { schema: { type: 'string', pattern: '^[0-9]{1,5}$' }, must: 'be a whole number from 0 to 65535' },
  HOST: { schema: { type: 'string', minLength: 1 }, must: 'be a host name or IP address to listen on' },
  DATABASE_URL: { schema: { type: 'string', pattern: '^postgres(ql)?://' }, must: 'be a postgres:// or postgresql:// URL' },
  DATABASE_DIRECT_URL: { schema: { type: 'string', pattern: '^postgres(ql)?://' }, must: 'be a postgres:// or postgresql:// URL of a direct connection to the same database' },
  DATABASE_MIGRATION_URL: { schema: { type: 'string', pattern: '^postgres(ql)?://' }, must: 'be a postgres:// or postgresql:// URL of a direct connection to the same database, as the role that owns its tables' },
  DATABASE_POOLER: { schema: { enum: ['none', 'transaction'] }, must: 'be none or transaction (DATABASE_URL goes through a pooler such as pgbouncer in transaction mode)' },
  DATABASE_POOL_SIZE: { schema: { type: 'string', pattern: '^[0-9]{1,4}$' }, must: 'be a whole number of connections from 1 to 1000' },
  DATA_DIR: { schema: { type: 'string', minLength: 1 }, must: 'be a directory path' },
  PUBLIC_URL: { schema: { type: 'string', pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$' }, must: 'be the service\'s own base URL, like https://botlink.example.com' },
  DOMAIN: { schema: { type: 'string', maxLength: 253, pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$' }, must: 'be a host name only, like chat.yourshop.example (no https://, no path)' },
  MASTER_KEY: { schema: { type: 'string', pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$' }, must: 'be 32 random bytes as 64 hex characters or base64 (openssl rand -base64 32)' },
  MASTER_KEY_PREVIOUS: { schema: { type: 'string', pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$' }, must: 'be the master key being replaced, 32 bytes as 64 hex characters or base64' },
  ADMIN_TOKEN: { schema: { type: 'string', minLength: 32 }, must: 'be at least 32 characters' },
  LLM_BASE_URL: { schema: { type: 'string', pattern: '^https?://' }, must: 'be an http(s) URL of an OpenAI-compatible API' },
  LLM_API_KEY: { schema: { type: 'string', minLength: 1 }, must: 'not be empty when set' },
  LLM_MODEL: { schema: { type: 'string', minLength: 1 }, must: 'name a model' },
  LLM_EMBEDDING_MODEL: { schema: { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\S+$' }, must: 'name an embedding model of LLM_BASE_URL, like text-embedding-3-small' },
  WHATSAPP_APP_SECRET: { schema: { type: 'string', minLength: 1 }, must: 'not be empty when set' },
  WHATSAPP_VERIFY_TOKEN: { schema: { type: 'string', minLength: 1 }, must: 'not be empty when set' },
  WHATSAPP_GRAPH_URL: { schema: { type: 'string', pattern: '^https://' }, must: 'be an https URL' },
  TWILIO_AUTH_TOKEN: { schema: { type: 'string', minLength: 1 }, must: 'not be empty when set' },
  BRIDGE_TOKEN: { schema: { type: 'string', minLength: 32 }, must: 'be at least 32 characters' },
  OUTBOUND_ALLOW: { schema: { type: 'string' }, must: 'be a comma list of CIDRs or host names' },
  TRUST_PROXY: { schema: { type: 'string' }, must: 'be a comma list of the load balancers\' IP addresses or CIDRs, or loopback, linklocal, uniquelocal' },
  BOTLINK_OWNER_EMAIL: { schema: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', maxLength: 254 }, must: 'be the first owner\'s email address, like you@yourshop.example' },
  BOTLINK_WORKSPACE_NAME: { schema: { type: 'string', minLength: 1, maxLength: 200 }, must: 'be a name of at most 200 characters' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { schema: { type: 'string', pattern: '^https?://' }, must: 'be the http(s) base URL of an OTLP/HTTP collector, like http://localhost:4318' },
  LEASE_MS: { schema: { type: 'string', pattern: '^[0-9]{1,7}$' }, must: 'be a whole number of milliseconds from 1000 to 600000' },
  KNOWLEDGE_MAX_PAGES: { schema: { type: 'string', pattern: '^[0-9]{1,6}$' }, must: 'be a whole number of pages from 1 to 100000' },
  KNOWLEDGE_AI_QUESTIONS: { schema: { enum: ['on', 'off'] }, must: 'be on or off (on: the model writes the questions customers would ask each passage)' },
  PRESENCE_IDLE_MINUTES: { schema: { type: 'string', pattern: '^[0-9]{1,4}$' }, must: 'be a whole number of minutes from 1 to 1440' },
  ASSIGN_MAX_PER_AGENT: { schema: { type: 'string', pattern: '^[0-9]{1,4}$' }, must: 'be a whole number of conversations from 1 to 1000' },
  FIRST_REPLY_TARGET_MINUTES: { schema: { type: 'string', pattern: '^[0-9]{1,4}$' }, must: 'be a whole number of minutes from 1 to 1440' },
  SMTP_URL: { schema: { type: 'string', pattern: '^smtps?://([^@/\\s]+@)?[^@/:\\s]+(:[0-9]{1,5})?/?$' }, must: 'be smtp://user:password@host:port or smtps://user:password@host:port (user and password URL-encoded)' },
  SMTP_FROM: { schema: { type: 'string', maxLength: 320, pattern: '^([^<>\\r\\n]*<[^@<>\\s]+@[^@<>\\s]+>|[^@<>\\s]+@[^@<>\\s]+)$' }, must: 'be the sender address, like chat@yourshop.example or "Your shop <chat@yourshop.example>"' },
  VISITOR_GONE_MINUTES: { schema: { type: 'string', pattern: '^[0-9]{1,4}$' }, must: 'be a whole number of minutes from 1 to 1440' },
  LOG_LEVEL: { schema: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] }, must: 'be one of fatal, error, warn, info, debug, trace, silent' },
  LOG_CUSTOMER_DATA: { schema: { enum: ['on', 'off'] }, must: 'be on or off (on logs what customers say, their numbers and emails at debug level, for debugging only)' },
} as const;

type SettingName = keyof typeof settings;

export interface Config {
  /** Listen port; default 8080. */
  readonly port: number;
  /** Listen address; default 0.0.0.0. */
  readonly host: string;
  /** Real PostgreSQL; null: embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | null;
  /**
   * A direct connection to the same PostgreSQL for LISTEN, when DATABASE_URL goes through a transaction pooler (which
   * cannot hold one); null: DATABASE_URL itself.
   */
  readonly databaseDirectUrl: string | null;
  /**
   * The migrations' connection to the same PostgreSQL, as the role that owns the tables, so that DATABASE_URL's role
   * may be one that only adds to the audit log (docs/operations.md, "The audit log's owner"); null: the migrations
   * run over DATABASE_DIRECT_URL, else DATABASE_URL.
   */
  readonly databaseMigrationUrl: string | null;
  /**
   * `transaction`: DATABASE_URL is a transaction pooler (pgbouncer in transaction mode, a managed "pooled" URL): no
   * named prepared statements, migrations in one transaction, LISTEN only over DATABASE_DIRECT_URL. Default `none`.
   */
  readonly databasePooler: 'none' | 'transaction';
  /**
   * Connections this engine keeps to DATABASE_URL at most (a LISTEN connection comes on top); null: the database
   * module's DEFAULT_POOL_SIZE (db/database.ts). Engines × this must fit the server's or the pooler's client limit.
   */
  readonly databasePoolSize: number | null;
  /** Embedded database and generated local secrets; default ./data. */
  readonly dataDir: string;
  /** The service's own base URL, without a trailing slash; default https://DOMAIN when DOMAIN is set, else http://localhost:<port>. */
  readonly publicUrl: string;
  /** 32 bytes that encrypt stored secrets; null: generated into `dataDir` (embedded mode only). */
  readonly masterKey: Buffer | null;
  /** During a rotation (docs/operations.md): the old master key, still accepted for reading until `secrets reseal` ran. */
  readonly masterKeyPrevious: Buffer | null;
  readonly adminToken: string | null;
  /**
   * The OpenAI-compatible model; `embeddingModel` (LLM_EMBEDDING_MODEL): the embeddings ranked with the knowledge
   * search (docs/knowledge.md, "Embeddings"), null: none (the default).
   */
  readonly llm: { readonly baseUrl: string; readonly apiKey: string | null; readonly model: string; readonly embeddingModel?: string | null } | null;
  readonly whatsapp: { readonly appSecret: string | null; readonly verifyToken: string | null; readonly graphUrl: string };
  readonly twilioAuthToken: string | null;
  readonly bridgeToken: string | null;
  /** The first workspace, made at the first start on an empty embedded database (src/bootstrap.ts); null: the defaults. */
  readonly firstOwner: { readonly email: string | null; readonly workspaceName: string | null };
  /** OUTBOUND_ALLOW: CIDRs or host names exempt from the public-address rule (development and tests only). */
  readonly outboundAllow: readonly string[];
  /**
   * TRUST_PROXY: the addresses of the load balancers in front of the engines (IPs, CIDRs, or Express's `loopback`,
   * `linklocal`, `uniquelocal`). A request from one of them is taken to come from the address its `X-Forwarded-For`
   * names, for the per-address limits and the audit log (docs/operations.md, "Behind a load balancer"). Empty
   * (default): the header is ignored, since anyone may send it.
   */
  readonly trustProxy: readonly string[];
  readonly logLevel: string;
  /** OTLP/HTTP collector the turns' spans are exported to (docs/operations.md, "Tracing"); null: tracing off. */
  readonly otlpEndpoint: string | null;
  /**
   * The lease of claimed work (a message being answered, a delivery, a session's turn), renewed every third of it;
   * default LEASE_MS of src/leases/durations.ts (15 s). Tests shorten it; production keeps the default
   * (docs/reliability.md, "Leases").
   */
  readonly leaseMs: number;
  /**
   * The most pages a workspace's websites keep together (docs/knowledge.md, "Websites and files"); default
   * DEFAULT_KNOWLEDGE_MAX_PAGES (500).
   */
  readonly knowledgeMaxPages: number;
  /**
   * KNOWLEDGE_AI_QUESTIONS: the model writes the questions customers would ask each passage (docs/knowledge.md,
   * "Questions written by the AI"); default on when LLM_BASE_URL is set, always off without it.
   */
  readonly knowledgeAiQuestions: boolean;
  /**
   * The team's presence and assignment (docs/architecture.md, "Presence and assignment"): "available" lapses to "away"
   * after `presenceIdleMinutes` without an open dashboard (default 5); the assignment gives one person at most
   * `assignMaxPerAgent` open conversations (default 10); a conversation waiting longer than `firstReplyTargetMinutes`
   * is overdue (default 5).
   */
  readonly team: { readonly presenceIdleMinutes: number; readonly assignMaxPerAgent: number; readonly firstReplyTargetMinutes: number };
  /**
   * Email (docs/operations.md, "Email"): SMTP_URL and SMTP_FROM, or null when SMTP_URL is unset (nothing is emailed).
   * The URL holds the password: it is never logged or echoed.
   */
  readonly smtp: { readonly url: string; readonly from: string } | null;
  /** A web chat visitor is gone after this many minutes without an open widget (VISITOR_GONE_MINUTES, default 3). */
  readonly visitorGoneMinutes: number;
  /** LOG_CUSTOMER_DATA=on: customers' words, numbers and emails reach debug lines (docs/privacy.md, "Logs"); default off. */
  readonly logCustomerData: boolean;
}

const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile({
  type: 'object',
  properties: Object.fromEntries(Object.entries(settings).map(([name, s]) => [name, s.schema])),
});

/** Reads and checks the environment. Throws {@link ConfigError} with one sentence naming the first wrong setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as in most twelve-factor tools (`FOO= npm start`).
  const raw: Partial<Record<SettingName, string>> = {};
  for (const name of Object.keys(settings) as SettingName[]) {
    const value = env[name]?.trim();
    if (value) raw[name] = value;
  }
  if (!validate(raw)) {
    const error = validate.errors?.[0];
    const name = (error?.instancePath.slice(1) ?? '') as SettingName;
    const setting = settings[name];
    throw new ConfigError(
      setting ? `${name} must ${setting.must} (got ${JSON.stringify(shown(name, raw[name]))}).` : 'The environment is invalid.',
    );
  }

  const port = raw.PORT === undefined ? 8080 : Number(raw.PORT);
  if (port > 65535) throw new ConfigError(`PORT must ${settings.PORT.must} (got ${JSON.stringify(raw.PORT)}).`);
  const databaseUrl = raw.DATABASE_URL ?? null;
  const leaseMs = raw.LEASE_MS === undefined ? LEASE_MS : Number(raw.LEASE_MS);
  if (leaseMs < MIN_LEASE_MS || leaseMs > 600_000) throw new ConfigError(`LEASE_MS must ${settings.LEASE_MS.must} (got ${JSON.stringify(raw.LEASE_MS)}).`);
  const knowledgeMaxPages = raw.KNOWLEDGE_MAX_PAGES === undefined ? DEFAULT_KNOWLEDGE_MAX_PAGES : Number(raw.KNOWLEDGE_MAX_PAGES);
  if (knowledgeMaxPages < 1 || knowledgeMaxPages > 100_000) {
    throw new ConfigError(`KNOWLEDGE_MAX_PAGES must ${settings.KNOWLEDGE_MAX_PAGES.must} (got ${JSON.stringify(raw.KNOWLEDGE_MAX_PAGES)}).`);
  }
  const team = Object.freeze({
    presenceIdleMinutes: wholeNumber(raw, 'PRESENCE_IDLE_MINUTES', DEFAULT_PRESENCE_IDLE_MINUTES, 1, 1_440),
    assignMaxPerAgent: wholeNumber(raw, 'ASSIGN_MAX_PER_AGENT', DEFAULT_ASSIGN_MAX_PER_AGENT, 1, 1_000),
    firstReplyTargetMinutes: wholeNumber(raw, 'FIRST_REPLY_TARGET_MINUTES', DEFAULT_FIRST_REPLY_TARGET_MINUTES, 1, 1_440),
  });
  if (raw.SMTP_FROM && !raw.SMTP_URL) throw new ConfigError('SMTP_FROM needs SMTP_URL: the server that sends the mail.');
  if (raw.SMTP_URL && !raw.SMTP_FROM) throw new ConfigError('SMTP_URL needs SMTP_FROM: the address the mail is sent from.');
  const visitorGoneMinutes = wholeNumber(raw, 'VISITOR_GONE_MINUTES', DEFAULT_VISITOR_GONE_MINUTES, 1, 1_440);
  const masterKey = raw.MASTER_KEY === undefined ? null : decodeMasterKey(raw.MASTER_KEY);
  const masterKeyPrevious = raw.MASTER_KEY_PREVIOUS === undefined ? null : decodeMasterKey(raw.MASTER_KEY_PREVIOUS, 'MASTER_KEY_PREVIOUS');
  if (masterKeyPrevious && !masterKey) throw new ConfigError('MASTER_KEY_PREVIOUS needs MASTER_KEY: the new key that replaces it.');
  if (databaseUrl && !masterKey) {
    throw new ConfigError('MASTER_KEY must be set when DATABASE_URL is set, so stored secrets stay readable across hosts.');
  }
  if (raw.DATABASE_DIRECT_URL && !databaseUrl) throw new ConfigError('DATABASE_DIRECT_URL needs DATABASE_URL: it is a second way into the same database.');
  if (raw.DATABASE_MIGRATION_URL && !databaseUrl) throw new ConfigError('DATABASE_MIGRATION_URL needs DATABASE_URL: the migrations prepare the database the engine then uses.');
  const databasePoolSize = raw.DATABASE_POOL_SIZE === undefined ? null : Number(raw.DATABASE_POOL_SIZE);
  if (databasePoolSize !== null && (databasePoolSize < 1 || databasePoolSize > 1000)) {
    throw new ConfigError(`DATABASE_POOL_SIZE must ${settings.DATABASE_POOL_SIZE.must} (got ${JSON.stringify(raw.DATABASE_POOL_SIZE)}).`);
  }
  if (databasePoolSize !== null && !databaseUrl) throw new ConfigError('DATABASE_POOL_SIZE needs DATABASE_URL: the embedded database has no connections to pool.');
  if (raw.DATABASE_POOLER === 'transaction' && !databaseUrl) throw new ConfigError('DATABASE_POOLER=transaction needs DATABASE_URL: the embedded database has no pooler.');
  const trustProxy = parseTrustProxy(raw.TRUST_PROXY);
  if ((raw.LLM_API_KEY || raw.LLM_MODEL) && !raw.LLM_BASE_URL) {
    throw new ConfigError('LLM_BASE_URL must be set when LLM_API_KEY or LLM_MODEL is set.');
  }
  if (raw.LLM_EMBEDDING_MODEL && !raw.LLM_BASE_URL) throw new ConfigError('LLM_EMBEDDING_MODEL needs LLM_BASE_URL: the embeddings are asked of that API.');
  if (raw.KNOWLEDGE_AI_QUESTIONS === 'on' && !raw.LLM_BASE_URL) throw new ConfigError('KNOWLEDGE_AI_QUESTIONS=on needs LLM_BASE_URL: the questions are written by the model.');

  return Object.freeze({
    port,
    host: raw.HOST ?? '0.0.0.0',
    databaseUrl,
    databaseDirectUrl: raw.DATABASE_DIRECT_URL ?? null,
    databaseMigrationUrl: raw.DATABASE_MIGRATION_URL ?? null,
    databasePooler: (raw.DATABASE_POOLER as 'none' | 'transaction' | undefined) ?? 'none',
    databasePoolSize,
    dataDir: raw.DATA_DIR ?? './data',
    // DOMAIN (compose.yaml's public profile, Caddy in front) gives https://DOMAIN unless PUBLIC_URL says otherwise.
    publicUrl: (raw.PUBLIC_URL ?? (raw.DOMAIN ? `https://${raw.DOMAIN.toLowerCase()}` : `http://localhost:${port}`)).replace(/\/+$/, ''),
    masterKey,
    masterKeyPrevious,
    adminToken: raw.ADMIN_TOKEN ?? null,
    llm: raw.LLM_BASE_URL
      ? Object.freeze({ baseUrl: raw.LLM_BASE_URL.replace(/\/+$/, ''), apiKey: raw.LLM_API_KEY ?? null, model: raw.LLM_MODEL ?? 'gpt-4o-mini', embeddingModel: raw.LLM_EMBEDDING_MODEL ?? null })
      : null,
    whatsapp: Object.freeze({
      appSecret: raw.WHATSAPP_APP_SECRET ?? null,
      verifyToken: raw.WHATSAPP_VERIFY_TOKEN ?? null,
      graphUrl: (raw.WHATSAPP_GRAPH_URL ?? 'https://graph.facebook.com/v21.0').replace(/\/+$/, ''),
    }),
    twilioAuthToken: raw.TWILIO_AUTH_TOKEN ?? null,
    bridgeToken: raw.BRIDGE_TOKEN ?? null,
    firstOwner: Object.freeze({ email: raw.BOTLINK_OWNER_EMAIL ?? null, workspaceName: raw.BOTLINK_WORKSPACE_NAME ?? null }),
    outboundAllow: Object.freeze(
      (raw.OUTBOUND_ALLOW ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    ),
    trustProxy,
    logLevel: raw.LOG_LEVEL ?? 'info',
    otlpEndpoint: raw.OTEL_EXPORTER_OTLP_ENDPOINT ?? null,
    leaseMs,
    knowledgeMaxPages,
    knowledgeAiQuestions: raw.LLM_BASE_URL !== undefined && raw.KNOWLEDGE_AI_QUESTIONS !== 'off',
    logCustomerData: raw.LOG_CUSTOMER_DATA === 'on',
    team,
    smtp: raw.SMTP_URL && raw.SMTP_FROM ? Object.freeze({ url: raw.SMTP_URL, from: raw.SMTP_FROM }) : null,
    visitorGoneMinutes,
  });
}

/** A whole-number setting inside its range (the pattern already checked the digits), or its default when unset. */
function wholeNumber(raw: Partial<Record<SettingName, string>>, name: SettingName, fallback: number, min: number, max: number): number {
  const value = raw[name] === undefined ? fallback : Number(raw[name]);
  if (value < min || value > max) throw new ConfigError(`${name} must ${settings[name].must} (got ${JSON.stringify(raw[name])}).`);
  return value;
}

const PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY's entries, each an IP address, a CIDR or one of Express's presets; anything else stops the start. */
function parseTrustProxy(value: string | undefined): readonly string[] {
  const entries = (value ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const entry of entries) {
    if (PROXY_PRESETS.has(entry)) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(`TRUST_PROXY must ${settings.TRUST_PROXY.must} (got ${JSON.stringify(entry)}).`);
    }
  }
  return Object.freeze(entries);
}

function decodeMasterKey(value: string, name: 'MASTER_KEY' | 'MASTER_KEY_PREVIOUS' = 'MASTER_KEY'): Buffer {
  const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (bytes.length !== 32) {
    throw new ConfigError(`${name} must ${settings[name].must} (it decodes to ${bytes.length} bytes).`);
  }
  return bytes;
}

/** Secrets are never echoed back, not even in a start-up error. */
const secretSettings = new Set<SettingName>(['MASTER_KEY', 'MASTER_KEY_PREVIOUS', 'ADMIN_TOKEN', 'LLM_API_KEY', 'WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN', 'TWILIO_AUTH_TOKEN', 'BRIDGE_TOKEN', 'DATABASE_URL', 'DATABASE_DIRECT_URL', 'DATABASE_MIGRATION_URL', 'SMTP_URL']);
function shown(name: SettingName, value: string | undefined): string {
  if (value === undefined) return '';
  return secretSettings.has(name) ? `${value.length} characters` : value;
}
