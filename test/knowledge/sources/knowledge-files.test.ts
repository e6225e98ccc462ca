/**
 * Files and sources through the API (docs/knowledge.md, "Websites and files"), on both databases: a TXT and a PDF made
 * here are uploaded (201), listed as sources of kind file and searchable; a re-upload of the same name replaces the
 * file; its text is kept up to 2 MB, noted; past 20 MB is 413, unreadable bytes 422; deleting a file deletes its passages; a URL the outbound rules refuse
 * is 422 naming the rule; agents read but do not write; another workspace's source is not there.
 */
import { randomBytes } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../../helpers/service.ts';

async function pdfWith(lines: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 12, font }));
  return doc.save();
}

describeEachDatabase('knowledge files and sources through the API', (getDb) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    service = await startTestService(getDb(), {}, { knowledgeSources: { intervalMs: 0 } });
    ws = await seedWorkspace(service, 'Shoes');
    other = await seedWorkspace(service, 'Hats');
  });
  afterAll(async () => {
    await service?.stop();
  });

  async function upload(token: string, name: string, bytes: Uint8Array, type: string, language?: string) {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type }), name);
    if (language) form.append('language', language);
    const res = await fetch(`${service.url}/v1/knowledge/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const search = async (q: string) => (await service.knowledge.search(ws.workspaceId, q, 'en')).passages;

  describe('a text file', () => {
    let id: string;
    it('is read at once (201), listed as a source of kind file and searchable', async () => {
      const made = await upload(ws.admin, 'returns.txt', new TextEncoder().encode('Returns\n\nShoes that have been worn\noutside cannot be returned. Socks are never returned.'), 'text/plain', 'en');
      expect(made.status).toBe(201);
      expect(made.body.source).toMatchObject({ kind: 'file', name: 'returns.txt', status: 'done' });
      id = made.body.source.id;
      const listed = await service.api('GET', '/v1/knowledge/sources', { token: ws.agent });
      expect(listed.status).toBe(200);
      expect(listed.body.sources).toEqual([expect.objectContaining({ id, kind: 'file', name: 'returns.txt', pages: 1, file: { bytes: expect.any(Number), type: 'text/plain' } })]);
      const found = await search('Can I return shoes I wore outside?');
      expect(found[0]?.text).toContain('Shoes that have been worn outside cannot be returned.');
    });

    it('is replaced by a file of the same name', async () => {
      const again = await upload(ws.owner, 'returns.txt', new TextEncoder().encode('Returns are free within 60 days, in the original box.'), 'text/plain');
      expect(again.status).toBe(201);
      const files = (await service.api('GET', '/v1/knowledge/sources', { token: ws.owner })).body.sources.filter((s: { name: string }) => s.name === 'returns.txt');
      expect(files).toHaveLength(1);
      expect(files[0].id).toBe(again.body.source.id);
      expect((await search('Socks are never returned')).some((p) => p.text.includes('Socks'))).toBe(false);
      expect((await search('within how many days are returns free?'))[0]?.text).toContain('60 days');
      id = again.body.source.id;
    });

    it('goes with its passages when it is deleted', async () => {
      expect((await service.api('DELETE', `/v1/knowledge/sources/${id}`, { token: ws.owner })).status).toBe(204);
      expect(await search('within how many days are returns free?')).toEqual([]);
      expect((await service.api('GET', `/v1/knowledge/sources/${id}`, { token: ws.owner })).status).toBe(404);
    });
  });

  it('reads a PDF made here and finds what it says', async () => {
    const made = await upload(ws.owner, 'gift-wrapping.pdf', await pdfWith(['Gift wrapping', 'Gift wrapping costs three euros per parcel.']), 'application/pdf');
    expect(made.status).toBe(201);
    expect((await search('How much does gift wrapping cost?'))[0]?.text).toContain('three euros');
    // Its passage is read like any entry, but changed only by uploading the file again.
    const doc = await getDb().db.selectFrom('knowledge_documents').select('id').where('source_id', '=', made.body.source.id).executeTakeFirstOrThrow();
    const entry = await service.api('GET', `/v1/knowledge/entries/${doc.id}`, { token: ws.agent });
    expect(entry.body).toMatchObject({ origin: 'file', editable: false });
    const edit = await service.api('PUT', `/v1/knowledge/entries/${doc.id}`, { token: ws.owner, body: { type: 'page', title: 'Gift wrapping', text: 'Free.' } });
    expect(edit.status).toBe(409);
    expect((await service.api('DELETE', `/v1/knowledge/entries/${doc.id}`, { token: ws.owner })).status).toBe(409);
  });

  it('refuses a file over 20 MB with 413 and a clear message', async () => {
    const res = await upload(ws.owner, 'huge.txt', new Uint8Array(21 * 1024 * 1024).fill(97), 'text/plain');
    expect(res.status).toBe(413);
    expect(res.body.error.message).toBe('The file is larger than 20 MB, the most a file may have.');
    expect((await service.api('GET', '/v1/knowledge/sources', { token: ws.owner })).body.sources.some((s: { name: string }) => s.name === 'huge.txt')).toBe(false);
  });

  it('keeps at most 2 MB of a file\'s text, cut at a paragraph, and says so in its answer', async () => {
    const paragraph = (i: number) => `Paragraph ${i}: every umbrella in the catalogue folds to a third of its length and weighs under four hundred grams.`;
    const text = Array.from({ length: 25_000 }, (_, i) => paragraph(i)).join('\n\n');
    expect(text.length).toBeGreaterThan(2.5 * 1024 * 1024);
    const made = await upload(ws.owner, 'catalogue.txt', new TextEncoder().encode(text), 'text/plain');
    expect(made.status).toBe(201);
    expect(made.body.source.skipped).toEqual([{ url: 'catalogue.txt', reason: 'its text is longer than 2 MB: only its first 2 MB are kept' }]);
    const doc = await getDb().db.selectFrom('knowledge_documents').select('body').where('source_id', '=', made.body.source.id).executeTakeFirstOrThrow();
    expect(Buffer.byteLength(doc.body)).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(Buffer.byteLength(doc.body)).toBeGreaterThan(1.9 * 1024 * 1024);
    expect(doc.body.endsWith('four hundred grams.')).toBe(true);
    expect((await service.api('DELETE', `/v1/knowledge/sources/${made.body.source.id}`, { token: ws.owner })).status).toBe(204);
  }, 60_000);

  it('refuses random bytes with 422', async () => {
    const res = await upload(ws.owner, 'scan.pdf', randomBytes(4096), 'application/pdf');
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('unprocessable');
  });

  it('refuses a website at an address the outbound rules refuse, naming the rule (422)', async () => {
    const res = await service.api('POST', '/v1/knowledge/sources', { token: ws.owner, body: { kind: 'website', url: 'https://10.1.2.3/' } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('private address');
    expect(res.body.error.details).toEqual([{ field: 'url', message: expect.stringContaining('private address') }]);
  });

  it('lets agents read but not write (403)', async () => {
    const site = await service.api('POST', '/v1/knowledge/sources', { token: ws.owner, body: { kind: 'website', url: 'https://127.0.0.1:9/', schedule: 'manual' } });
    expect(site.status).toBe(201);
    const id = site.body.source.id;
    expect((await service.api('GET', `/v1/knowledge/sources/${id}`, { token: ws.agent })).status).toBe(200);
    expect((await service.api('POST', '/v1/knowledge/sources', { token: ws.agent, body: { kind: 'website', url: 'https://127.0.0.1:9/' } })).status).toBe(403);
    expect((await service.api('POST', `/v1/knowledge/sources/${id}/sync`, { token: ws.agent })).status).toBe(403);
    expect((await service.api('DELETE', `/v1/knowledge/sources/${id}`, { token: ws.agent })).status).toBe(403);
    expect((await upload(ws.agent, 'notes.txt', new TextEncoder().encode('Agents cannot upload.'), 'text/plain')).status).toBe(403);
    expect((await service.api('POST', `/v1/knowledge/sources/${id}/sync`, { token: ws.owner })).status).toBe(202);
  });

  it("answers 404 for another workspace's source", async () => {
    const theirs = await upload(other.owner, 'hats.txt', new TextEncoder().encode('Hats are washed by hand.'), 'text/plain');
    expect(theirs.status).toBe(201);
    const id = theirs.body.source.id;
    expect((await service.api('GET', `/v1/knowledge/sources/${id}`, { token: ws.owner })).status).toBe(404);
    expect((await service.api('DELETE', `/v1/knowledge/sources/${id}`, { token: ws.owner })).status).toBe(404);
    expect((await service.api('POST', `/v1/knowledge/sources/${id}/sync`, { token: ws.owner })).status).toBe(404);
    expect((await service.api('GET', `/v1/knowledge/sources/${id}`, { token: other.agent })).status).toBe(200);
  });
});
