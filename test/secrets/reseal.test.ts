/** Rotating the master key: the old key still opens what it sealed, and `secrets reseal` moves everything to the new. */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { resealAll } from '../../src/secrets/reseal.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { integrationKeyContext, webhookSecretContext, whatsappTokenContext } from '../../src/secrets/contexts.ts';

const OLD = randomBytes(32);
const NEW = randomBytes(32);

describe('a secret box during a rotation', () => {
  it('opens values of the previous key, seals under the new one, and says which key a value is under', () => {
    const before = createSecretBox(OLD);
    const during = createSecretBox(NEW, [OLD]);
    const sealedOld = before.seal('whsec_abc', 'ctx');
    expect(during.open(sealedOld, 'ctx')).toBe('whsec_abc');
    expect(during.isCurrent(sealedOld, 'ctx')).toBe(false);
    const sealedNew = during.seal('whsec_abc', 'ctx');
    expect(during.isCurrent(sealedNew, 'ctx')).toBe(true);
    expect(() => before.open(sealedNew, 'ctx')).toThrow();
    // Still bound to its context, whichever key opens it.
    expect(() => during.open(sealedOld, 'other')).toThrow();
  });

  it('MASTER_KEY_PREVIOUS alone is refused with a sentence naming what is missing', () => {
    expect(() => loadConfig({ MASTER_KEY_PREVIOUS: OLD.toString('hex') })).toThrow(/MASTER_KEY_PREVIOUS needs MASTER_KEY/);
    expect(() => loadConfig({ MASTER_KEY: NEW.toString('hex'), MASTER_KEY_PREVIOUS: 'short' })).toThrow(/^MASTER_KEY_PREVIOUS must/);
  });
});

describeEachDatabase('secrets reseal', (get) => {
  it('rewrites every stored secret under the new key, leaves current ones alone, and names the unreadable', async () => {
    const { db } = get();
    const old = createSecretBox(OLD);
    const workspaceId = randomUUID();
    const endpointId = randomUUID();
    const strayId = randomUUID();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'Rotation', created_at: new Date() }).execute();
    await db.insertInto('integrations').values({ workspace_id: workspaceId, endpoint_url: 'https://shop.example/channel', key_sealed: old.seal('k'.repeat(64), integrationKeyContext(workspaceId)), key_hint: '…kkkk', updated_at: new Date() }).execute();
    await db.insertInto('whatsapp_accounts').values({ workspace_id: workspaceId, phone_number_id: `pn-${endpointId}`, access_token_sealed: old.seal('EAAG-token', whatsappTokenContext(workspaceId)), token_hint: '…oken', created_at: new Date(), updated_at: new Date() }).execute();
    const endpoint = (id: string, event: 'new_chat' | 'new_lead', sealed: string, previous: string | null) => ({
      id, workspace_id: workspaceId, event, url: 'https://hooks.example/in', secret_sealed: sealed, secret_hint: '…', previous_secret_sealed: previous, previous_secret_expires_at: previous ? new Date(Date.now() + 3600_000) : null, created_at: new Date(), updated_at: new Date(),
    });
    await db.insertInto('webhook_endpoints').values(endpoint(endpointId, 'new_chat', old.seal('whsec_new', webhookSecretContext(endpointId)), old.seal('whsec_old', webhookSecretContext(endpointId)))).execute();
    // Sealed under a key nobody has any more: reported, not fatal.
    await db.insertInto('webhook_endpoints').values(endpoint(strayId, 'new_lead', createSecretBox(randomBytes(32)).seal('lost', webhookSecretContext(strayId)), null)).execute();

    const box = createSecretBox(NEW, [OLD]);
    const first = await resealAll(db, box);
    expect(first).toEqual({ resealed: 4, current: 0, unreadable: [`webhook_endpoints.secret_sealed ${strayId}`] });

    const onlyNew = createSecretBox(NEW);
    const integration = await db.selectFrom('integrations').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    expect(onlyNew.open(integration.key_sealed, integrationKeyContext(workspaceId))).toBe('k'.repeat(64));
    const account = await db.selectFrom('whatsapp_accounts').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    expect(onlyNew.open(account.access_token_sealed, whatsappTokenContext(workspaceId))).toBe('EAAG-token');
    const hook = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow();
    expect(onlyNew.open(hook.secret_sealed, webhookSecretContext(endpointId))).toBe('whsec_new');
    expect(onlyNew.open(hook.previous_secret_sealed!, webhookSecretContext(endpointId))).toBe('whsec_old');

    // A second run finds everything current.
    expect(await resealAll(db, box)).toEqual({ resealed: 0, current: 4, unreadable: [`webhook_endpoints.secret_sealed ${strayId}`] });
  });
});
