/** What the extraction of a page or a file gives the knowledge base. */
export interface ExtractedText {
  /** The document's own title (a page's h1 or <title>, a PDF's metadata, a DOCX's first heading), else its name. */
  title: string;
  /** Plain text, paragraphs separated by one blank line: what src/knowledge/chunking.ts `chunkText` takes. */
  text: string;
  /** A two-letter language code when the document says it (html lang, PDF metadata), else null. */
  language: string | null;
}
