import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { extractFile } from '../../../src/knowledge/extract/index.ts';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** A minimal valid .docx: content types, the package relation, and a document of styled paragraphs. */
async function makeDocx(paragraphs: { style?: string; text: string }[], parts: Record<string, string> = {}): Promise<Uint8Array> {
  const zip = new JSZip();
  for (const [path, xml] of Object.entries(parts)) zip.file(path, xml);
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '</Types>',
  );
  zip.file(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      '</Relationships>',
  );
  const body = paragraphs
    .map(({ style, text }) => `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`)
    .join('');
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

describe('a Word document becomes its headings and paragraphs', () => {
  const document = makeDocx([
    { style: 'Heading1', text: 'Warranty' },
    { text: 'Every pair of shoes has a warranty of two years from the day of delivery.' },
    { style: 'Heading2', text: 'What the warranty covers' },
    { text: 'Soles that come loose and seams that open are repaired or replaced for free.' },
    { text: 'Wear from normal use is not covered.' },
  ]);

  it('keeps every heading and paragraph as a paragraph of its own', async () => {
    const { text } = await extractFile(await document, { name: 'warranty.docx' });
    expect(text.split('\n\n')).toEqual([
      'Every pair of shoes has a warranty of two years from the day of delivery.',
      'What the warranty covers',
      'Soles that come loose and seams that open are repaired or replaced for free.',
      'Wear from normal use is not covered.',
    ]);
  });

  it('is titled by the heading it opens with, which is then not repeated in its text', async () => {
    expect(await extractFile(await document, { name: 'warranty.docx' })).toMatchObject({ title: 'Warranty' });
  });

  it('is titled by its name when it opens with a paragraph', async () => {
    const plain = await makeDocx([{ text: 'Opening hours: Monday to Friday, 9 to 17.' }]);
    expect(await extractFile(plain, { name: 'Opening hours.docx' })).toMatchObject({ title: 'Opening hours', text: 'Opening hours: Monday to Friday, 9 to 17.' });
  });

  it('is read by its content whatever the content type says', async () => {
    const { text } = await extractFile(await document, { name: 'warranty.docx', contentType: 'application/octet-stream' });
    expect(text).toContain('Wear from normal use is not covered.');
  });

  it('takes its language from its metadata, else from its default style, and its title from the metadata when it has no heading', async () => {
    const core =
      '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ' +
      'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Garantie &amp; reparatie</dc:title><dc:language>nl-NL</dc:language></cp:coreProperties>';
    const dutch = await makeDocx([{ text: 'Elke schoen heeft twee jaar garantie.' }], { 'docProps/core.xml': core });
    expect(await extractFile(dutch, { name: 'garantie.docx' })).toMatchObject({ title: 'Garantie & reparatie', language: 'nl' });

    const styles = `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:lang w:val="en-GB" w:eastAsia="zh-CN"/></w:rPr></w:rPrDefault></w:docDefaults></w:styles>`;
    const english = await makeDocx([{ text: 'Every pair has two years of warranty.' }], { 'word/styles.xml': styles });
    expect(await extractFile(english, { name: 'warranty.docx' })).toMatchObject({ title: 'warranty', language: 'en' });
    expect(await extractFile(await document, { name: 'warranty.docx' })).toMatchObject({ language: null });
  });
});
