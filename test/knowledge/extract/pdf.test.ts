import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.ts';
import { chunkText } from '../../../src/knowledge/chunking.ts';
import { extractFile } from '../../../src/knowledge/extract/index.ts';

/** A PDF of A4 pages, each a list of body lines (an empty string is a blank line), with a running header and footer. */
async function makePdf(pages: string[][], options: { title?: string; language?: string } = {}): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  if (options.title) pdf.setTitle(options.title);
  if (options.language) pdf.setLanguage(options.language);
  pages.forEach((lines, index) => {
    const page = pdf.addPage([595, 842]);
    page.drawText('Shoe Shop · Returns policy', { x: 50, y: 800, size: 9, font });
    let y = 760;
    for (const line of lines) {
      if (line) page.drawText(line, { x: 50, y, size: 11, font });
      y -= 14;
    }
    page.drawText(`Page ${index + 1} of ${pages.length}`, { x: 260, y: 40, size: 9, font });
  });
  return pdf.save();
}

const policy = [
  [
    'Returns policy for online orders',
    '',
    'You can return any item within 30 days of delivery. Shoes that have been worn outside',
    'cannot be returned. Unworn items can be re-',
    'turned in their original box.',
    '',
    'Refunds are paid to the card you',
  ],
  [
    'paid with, within five working days. A pre-',
    'order can be cancelled until it ships.',
    '',
    'Exchanges for another size are free within Europe.',
  ],
  ['Gift cards cannot be exchanged for money.', '', 'Questions? Write to returns@shoes.example.'],
];

describe('a PDF becomes paragraphs of whole sentences', () => {
  it('joins a sentence broken over lines and a word hyphenated at a line end', async () => {
    const { text } = await extractFile(await makePdf(policy), { name: 'returns.pdf', contentType: 'application/pdf' });
    expect(text).toContain('Shoes that have been worn outside cannot be returned.');
    expect(text).toContain('Unworn items can be returned in their original box.');
    expect(text).not.toMatch(/re- ?turned/);
  });

  it('keeps the hyphen of a prefix written with one (pre-order)', async () => {
    const { text } = await extractFile(await makePdf(policy), { name: 'returns.pdf' });
    expect(text).toContain('A pre-order can be cancelled until it ships.');
  });

  it('keeps a sentence broken over a page break as one sentence, in one passage', async () => {
    const { text } = await extractFile(await makePdf(policy), { name: 'returns.pdf' });
    const sentence = 'Refunds are paid to the card you paid with, within five working days.';
    expect(text).toContain(sentence);
    expect(chunkText(text).some((chunk) => chunk.includes(sentence))).toBe(true);
  });

  it('keeps paragraphs apart where the page leaves a blank line', async () => {
    const { text } = await extractFile(await makePdf(policy), { name: 'returns.pdf' });
    expect(text.split('\n\n')).toEqual([
      'Returns policy for online orders',
      'You can return any item within 30 days of delivery. Shoes that have been worn outside cannot be returned. Unworn items can be returned in their original box.',
      'Refunds are paid to the card you paid with, within five working days. A pre-order can be cancelled until it ships.',
      'Exchanges for another size are free within Europe.',
      'Gift cards cannot be exchanged for money.',
      'Questions? Write to returns@shoes.example.',
    ]);
  });

  it('drops the running header and the footer whose page number changes', async () => {
    const { text } = await extractFile(await makePdf(policy), { name: 'returns.pdf' });
    expect(text).not.toContain('Shoe Shop · Returns policy');
    expect(text).not.toMatch(/Page \d of 3/);
  });

  it('takes the title and language from the metadata, else the file name', async () => {
    const titled = await extractFile(await makePdf(policy, { title: 'Returns and refunds', language: 'en-GB' }), { name: 'returns.pdf' });
    expect(titled).toMatchObject({ title: 'Returns and refunds', language: 'en' });
    const untitled = await extractFile(await makePdf(policy), { name: 'returns_policy_2026.pdf' });
    expect(untitled).toMatchObject({ title: 'returns policy 2026', language: null });
  });

  it('refuses a PDF without any text (a scan) with a sentence that says why', async () => {
    const pdf = await PDFDocument.create();
    pdf.addPage();
    const error = await extractFile(await pdf.save(), { name: 'scan.pdf' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'unprocessable', status: 422 });
    expect((error as AppError).message).toContain('scanned');
  });
});
