import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ConfigError } from '../src/errors.ts';

const key = 'ab'.repeat(32);

describe('configuration', () => {
  it('has working defaults for npm start on a fresh machine', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '0.0.0.0', databaseUrl: null, dataDir: './data', publicUrl: 'http://localhost:8080', masterKey: null, outboundAllow: [] });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it.each([
    [{ PORT: 'eighty' }, /^PORT must be a whole number from 0 to 65535 \(got "eighty"\)\.$/],
    [{ PORT: '70000' }, /^PORT must/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must be a postgres:\/\//],
    [{ DATABASE_URL: 'postgres://db/x' }, /^MASTER_KEY must be set when DATABASE_URL is set/],
    [{ MASTER_KEY: 'short' }, /^MASTER_KEY must be 32 random bytes/],
    [{ PUBLIC_URL: 'botlink.example.com' }, /^PUBLIC_URL must be/],
    [{ DOMAIN: 'https://chat.shop.example' }, /^DOMAIN must be a host name only/],
    [{ DOMAIN: 'chat.shop.example/path' }, /^DOMAIN must be a host name only/],
    [{ ADMIN_TOKEN: 'tooshort' }, /^ADMIN_TOKEN must be at least 32 characters/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of/],
    [{ LOG_CUSTOMER_DATA: 'yes' }, /^LOG_CUSTOMER_DATA must be on or off/],
    [{ WHATSAPP_GRAPH_URL: 'http://graph' }, /^WHATSAPP_GRAPH_URL must be an https URL/],
    [{ LLM_MODEL: 'x' }, /^LLM_BASE_URL must be set/],
  ])('stops on %j with one sentence naming the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('keeps customers\' data out of the logs unless LOG_CUSTOMER_DATA is on', () => {
    expect(loadConfig({}).logCustomerData).toBe(false);
    expect(loadConfig({ LOG_CUSTOMER_DATA: 'on' }).logCustomerData).toBe(true);
    expect(loadConfig({ LOG_CUSTOMER_DATA: 'off' }).logCustomerData).toBe(false);
  });

  it('never echoes a secret in its error', () => {
    try {
      loadConfig({ ADMIN_TOKEN: 'hunter2' });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
      expect((err as Error).message).toContain('7 characters');
    }
  });

  it('accepts the master key as hex or base64', () => {
    expect(loadConfig({ MASTER_KEY: key }).masterKey).toEqual(Buffer.from(key, 'hex'));
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ MASTER_KEY: b64 }).masterKey).toEqual(Buffer.alloc(32, 7));
  });

  it('takes https://DOMAIN as the public address when DOMAIN is set and PUBLIC_URL is not (Caddy in front)', () => {
    expect(loadConfig({ DOMAIN: 'Chat.TrailTent.example' }).publicUrl).toBe('https://chat.trailtent.example');
    expect(loadConfig({ DOMAIN: 'chat.trailtent.example', PUBLIC_URL: 'https://other.example/' }).publicUrl).toBe('https://other.example');
  });

  it('reads the full set', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://postgres@127.0.0.1/test',
      MASTER_KEY: key,
      PUBLIC_URL: 'https://botlink.example.com/',
      OUTBOUND_ALLOW: '127.0.0.0/8, integrator.test ,',
      LLM_BASE_URL: 'https://llm.example.com/v1/',
      LLM_MODEL: 'm',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      publicUrl: 'https://botlink.example.com',
      outboundAllow: ['127.0.0.0/8', 'integrator.test'],
      llm: { baseUrl: 'https://llm.example.com/v1', apiKey: null, model: 'm' },
    });
  });

  it('reads TRUST_PROXY as a list of balancer addresses, CIDRs and presets, and refuses anything else by name', () => {
    expect(loadConfig({}).trustProxy).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7 ,loopback,fd00::/8,' }).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.7', 'loopback', 'fd00::/8']);
    for (const wrong of ['true', '*', '10.0.0.0/33', 'fd00::/129', 'lb.internal', '10.0.0.1/8/1', '10.0.0/8']) {
      expect(() => loadConfig({ TRUST_PROXY: wrong }), wrong).toThrow(/^TRUST_PROXY must be a comma list of the load balancers' IP addresses/);
    }
  });

  it('sizes the connection pool with DATABASE_POOL_SIZE, from 1 to 1000, only for a real PostgreSQL', () => {
    const db = { DATABASE_URL: 'postgres://postgres@127.0.0.1/test', MASTER_KEY: key };
    expect(loadConfig(db).databasePoolSize).toBeNull();
    expect(loadConfig({ ...db, DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    expect(loadConfig({ ...db, DATABASE_POOL_SIZE: '1000' }).databasePoolSize).toBe(1000);
    for (const wrong of ['0', '1001', 'ten', '-1', '2.5']) {
      expect(() => loadConfig({ ...db, DATABASE_POOL_SIZE: wrong }), wrong).toThrow(/^DATABASE_POOL_SIZE must be a whole number of connections from 1 to 1000/);
    }
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '4' })).toThrow(/^DATABASE_POOL_SIZE needs DATABASE_URL/);
  });

  it('runs the migrations over DATABASE_MIGRATION_URL when set, a postgres URL beside DATABASE_URL, never echoed', () => {
    const db = { DATABASE_URL: 'postgres://botlink_engine@127.0.0.1/botlink', MASTER_KEY: key };
    expect(loadConfig(db).databaseMigrationUrl).toBeNull();
    expect(loadConfig({ ...db, DATABASE_MIGRATION_URL: 'postgres://botlink:pw@127.0.0.1/botlink' }).databaseMigrationUrl).toBe('postgres://botlink:pw@127.0.0.1/botlink');
    expect(() => loadConfig({ ...db, DATABASE_MIGRATION_URL: 'mysql://botlink:secret-pw@db/botlink' })).toThrow(/^DATABASE_MIGRATION_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(() => loadConfig({ ...db, DATABASE_MIGRATION_URL: 'mysql://botlink:secret-pw@db/botlink' })).not.toThrow(/secret-pw/);
    expect(() => loadConfig({ DATABASE_MIGRATION_URL: 'postgres://botlink@127.0.0.1/botlink' })).toThrow(/^DATABASE_MIGRATION_URL needs DATABASE_URL/);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: ' ' }).port).toBe(8080);
  });
});
