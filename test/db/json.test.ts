/**
 * The storage edge's last guard (db/json.ts): whatever strings a value holds, its `jsonb` text is accepted by
 * PostgreSQL and by PGlite, so one unstorable string never fails a batched write.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { jsonb } from '../../db/json.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('jsonb parameters', (get) => {
  it('U+0000 and lone surrogates become U+FFFD; the escaped text \\u0000 and well-formed pairs stay as they were', async () => {
    const value = { nul: 'a\u0000b', high: 'x\uD800', low: '\uDC00y', pair: '😀', text: 'literally \\u0000', ['k\u0000']: 1 };
    const { rows } = await sql<{ v: Record<string, unknown> }>`select ${jsonb(value)}::jsonb as v`.execute(get().db);
    expect(rows[0]!.v).toEqual({ nul: 'a\uFFFDb', high: 'x\uFFFD', low: '\uFFFDy', pair: '😀', text: 'literally \\u0000', ['k\uFFFD']: 1 });
  });

  it('property: any JSON value with any strings is accepted by the database', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(fc.letrec((tie) => ({
        value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(text, tie('value'), { maxKeys: 4 })),
      })).value, async (value) => {
        const { rows } = await sql<{ ok: boolean }>`select ${jsonb(value)}::jsonb is not null as ok`.execute(get().db);
        expect(rows[0]!.ok).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
