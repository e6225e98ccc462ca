/**
 * The Overview's small rules (docs/analytics.md): the endpoint's down periods cut to the period, the grouping rule of
 * the unanswered questions, percentiles read from the fixed buckets, and CSV fields.
 */
import { describe, expect, it } from 'vitest';
import { bucketOf, percentile } from '../../src/analytics/buckets.ts';
import { csvField } from '../../src/analytics/export.ts';
import { downPeriods, questionKey } from '../../src/analytics/overview.ts';

const at = (iso: string) => new Date(iso);

describe('down periods', () => {
  const from = at('2026-03-10T00:00:00Z');
  const to = at('2026-03-11T00:00:00Z');

  it('a period that began before the period starts at its start; one still open ends null', () => {
    const events = [
      { kind: 'endpoint_down', at: at('2026-03-09T22:00:00Z') },
      { kind: 'endpoint_recovered', at: at('2026-03-10T01:00:00Z') },
      { kind: 'endpoint_down', at: at('2026-03-10T20:00:00Z') },
    ];
    expect(downPeriods(events, from, to)).toEqual([
      { from: '2026-03-10T00:00:00.000Z', to: '2026-03-10T01:00:00.000Z' },
      { from: '2026-03-10T20:00:00.000Z', to: null },
    ]);
  });

  it('a recovery before the period leaves nothing; a second down while down changes nothing', () => {
    expect(downPeriods([{ kind: 'endpoint_recovered', at: at('2026-03-09T23:00:00Z') }], from, to)).toEqual([]);
    const twice = [
      { kind: 'endpoint_down', at: at('2026-03-10T02:00:00Z') },
      { kind: 'endpoint_down', at: at('2026-03-10T03:00:00Z') },
      { kind: 'endpoint_recovered', at: at('2026-03-10T04:00:00Z') },
    ];
    expect(downPeriods(twice, from, to)).toEqual([{ from: '2026-03-10T02:00:00.000Z', to: '2026-03-10T04:00:00.000Z' }]);
  });
});

describe('the grouping rule of unanswered questions', () => {
  it('the same meaningful words in any order, case, accents and punctuation are one question', () => {
    expect(questionKey('Do you deliver to Belgium?')).toBe(questionKey('Belgium, do you DELIVER??'));
    expect(questionKey('Café open on Sunday?')).toBe(questionKey('sunday cafe open'));
  });

  it('other words are another question; a message of stopwords only keeps its words', () => {
    expect(questionKey('Do you deliver to Belgium?')).not.toBe(questionKey('delivery to Belgium'));
    expect(questionKey('Is it?')).toBe('is it');
  });
});

describe('percentiles from fixed buckets', () => {
  it('reads the bucket the rank falls in, linearly inside it', () => {
    // 100 values between 100 and 150 ms (bucket [100, 150)): p50 halfway, p95 near its top.
    const h = new Map([[bucketOf(120), 100]]);
    expect(percentile(h, 0.5)).toBe(125);
    expect(percentile(h, 0.95)).toBe(148);
    expect(percentile(new Map(), 0.5)).toBeNull();
  });

  it('the open last bucket answers its lower edge', () => {
    expect(percentile(new Map([[bucketOf(90_000), 3]]), 0.95)).toBe(60_000);
  });
});

describe('CSV fields', () => {
  it('quotes every field and defuses formulas, but not a phone number', () => {
    expect(csvField('plain')).toBe('"plain"');
    expect(csvField('a "b", c')).toBe('"a ""b"", c"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('@SUM(1)')).toBe(`"'@SUM(1)"`);
    expect(csvField('-1+2')).toBe(`"'-1+2"`);
    expect(csvField('+31612345678')).toBe('"+31612345678"');
    expect(csvField(null)).toBe('""');
    expect(csvField(3)).toBe('"3"');
  });

  it('defuses a formula after a list separator, where a spreadsheet splitting on ; or , would start a cell', () => {
    expect(csvField("Hallo;=cmd|' /C calc'!A0")).toBe(`"Hallo;'=cmd|' /C calc'!A0"`);
    expect(csvField('a,+b;-c;@d')).toBe(`"a,'+b;'-c;'@d"`);
    expect(csvField('3;4, fine')).toBe('"3;4, fine"');
  });
});
