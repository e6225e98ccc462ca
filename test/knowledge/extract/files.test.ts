import { randomBytes } from 'node:crypto';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.ts';
import { extractFile } from '../../../src/knowledge/extract/index.ts';
import { MAX_FILE_BYTES } from '../../../src/knowledge/limits.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect(error).toMatchObject({ code: 'unprocessable', status: 422 });
  return error as AppError;
}

describe('a text file follows the paragraph rule', () => {
  it('joins lines broken inside sentences and keeps blank lines as paragraph breaks', async () => {
    const txt = 'Delivery takes two to three\nworking days in the Nether-\nlands.\r\n\r\nOrders before 22:00 ship\nthe same day.\n';
    const extracted = await extractFile(bytes(txt), { name: 'delivery.txt', contentType: 'text/plain' });
    expect(extracted).toEqual({
      title: 'delivery',
      text: 'Delivery takes two to three working days in the Netherlands.\n\nOrders before 22:00 ship the same day.',
      language: null,
    });
  });

  it('reads text that is not UTF-8 as Windows-1252', async () => {
    const latin = Uint8Array.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]); // "Café €5"
    expect((await extractFile(latin, { name: 'menu.txt' })).text).toBe('Café €5');
  });
});

describe('a Markdown file loses its markup and keeps its words', () => {
  it('takes the first heading as title, keeps other headings and each list item as a paragraph, links keep their text', async () => {
    const md = [
      '---',
      'layout: page',
      'tags: [shipping]',
      '---',
      '# Shipping',
      '',
      'We ship **every weekday** with [DHL](https://dhl.example) and',
      '_PostNL_, see `tracking` in your e-mail.',
      '',
      '## Costs',
      '',
      '- Netherlands: € 4,95',
      '- Belgium: € 7,95',
      '* Free from € 50',
      '',
      '1. Order before 22:00',
      '2. Receive it tomorrow',
    ].join('\n');
    const extracted = await extractFile(bytes(md), { name: 'shipping.md' });
    expect(extracted.title).toBe('Shipping');
    expect(extracted.text.split('\n\n')).toEqual([
      'We ship every weekday with DHL and PostNL, see tracking in your e-mail.',
      'Costs',
      'Netherlands: € 4,95',
      'Belgium: € 7,95',
      'Free from € 50',
      'Order before 22:00',
      'Receive it tomorrow',
    ]);
  });
});

describe('an HTML file is read as a web page', () => {
  it('is titled by its name when it has no title of its own', async () => {
    const extracted = await extractFile(bytes('<p>We deliver on Saturdays too.</p>'), { name: 'saturday_delivery.html' });
    expect(extracted).toEqual({ title: 'saturday delivery', text: 'We deliver on Saturdays too.', language: null });
  });

  it('keeps the article and drops the navigation', async () => {
    const html = '<html lang="nl"><head><title>Openingstijden</title></head><body><nav><a href="/">Home</a></nav><main><p>Wij zijn open van maandag tot en met vrijdag, van negen tot vijf.</p></main></body></html>';
    const extracted = await extractFile(bytes(html), { name: 'open.html', contentType: 'text/html' });
    expect(extracted).toEqual({ title: 'Openingstijden', text: 'Wij zijn open van maandag tot en met vrijdag, van negen tot vijf.', language: 'nl' });
  });
});

describe('a file that cannot be read is refused with 422 and a sentence', () => {
  it('refuses random bytes named .pdf', async () => {
    const error = await refusal(extractFile(randomBytes(4096), { name: 'returns.pdf', contentType: 'application/pdf' }));
    expect(error.message).toBe('"returns.pdf" is not a readable PDF: it may be damaged. Open it and save it as PDF again.');
  });

  it('refuses a damaged PDF that starts like one', async () => {
    await refusal(extractFile(Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2048)]), { name: 'broken.pdf' }));
  });

  it('refuses a program (.exe), naming the types it reads', async () => {
    const exe = Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00'), randomBytes(1024)]);
    const error = await refusal(extractFile(exe, { name: 'setup.exe', contentType: 'application/octet-stream' }));
    expect(error.message).toContain('PDF, Word (.docx), text (.txt), Markdown (.md) and HTML');
  });

  it('refuses a zip that is not a Word document, and a .docx that is not one', async () => {
    const zip = new JSZip();
    zip.file('a.txt', 'hello');
    const archive = await zip.generateAsync({ type: 'uint8array' });
    await refusal(extractFile(archive, { name: 'photos.zip' }));
    await refusal(extractFile(archive, { name: 'renamed.docx' }));
    await refusal(extractFile(bytes('plain text, not a zip'), { name: 'letter.docx' }));
  });

  it('refuses a file of an unsupported type, an empty one and one over the size limit', async () => {
    await refusal(extractFile(bytes('a,b\n1,2'), { name: 'prices.csv', contentType: 'text/csv' }));
    await refusal(extractFile(bytes('  \n\n '), { name: 'empty.txt' }));
    const error = await refusal(extractFile(new Uint8Array(MAX_FILE_BYTES + 1), { name: 'big.txt' }));
    expect(error.message).toContain('at most 20 MB');
  });
});
