/**
 * Knowledge sources (docs/knowledge.md, "Websites and files"; docs/interfaces.md, "Knowledge sources"): websites and
 * sitemaps the service fetches and re-syncs, and uploaded files. Every user of the workspace reads them; owners and
 * admins add, sync and delete. Another workspace's source is not there (404).
 *
 * A file comes as multipart/form-data (field `file`, optional `language`), read here with busboy within
 * MAX_FILE_BYTES: beyond it the rest is read and dropped, and the answer is 413.
 */
import busboy from 'busboy';
import type { Request } from 'express';
import { AppError } from '../../errors.ts';
import { MAX_FILE_BYTES, MAX_PAGE_BYTES } from '../../knowledge/limits.ts';
import type { FileInput, KnowledgeSources, SourceInput } from '../../knowledge/sources/knowledge-sources.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';
import { compileBodyValidator } from '../validation.ts';

const LANGUAGE_PATTERN = '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$';
const MB = 1024 * 1024;

const sourceBody: JsonSchema = {
  type: 'object',
  required: ['kind', 'url'],
  additionalProperties: false,
  properties: {
    kind: { enum: ['website', 'sitemap'], description: "website: a start URL whose links on the same host are followed; sitemap: a sitemap's (or sitemap index's) pages." },
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'https only; it must pass the outbound rules (a public address).' },
    schedule: { enum: ['daily', 'weekly', 'manual'], description: 'When it is synced again; default daily. manual: only on POST …/{id}/sync.' },
    language: { type: ['string', 'null'], pattern: LANGUAGE_PATTERN, description: "The pages' language; absent: each page's own (html lang)." },
  },
};

const sourceSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    kind: { enum: ['website', 'sitemap', 'file'] },
    url: { type: ['string', 'null'] },
    name: { type: 'string', description: "The file's name, or the site's host." },
    schedule: { enum: ['daily', 'weekly', 'manual'] },
    language: { type: ['string', 'null'] },
    status: { enum: ['queued', 'syncing', 'done', 'failed'] },
    found: { type: 'integer', description: 'URLs the last (or running) sync found.' },
    fetched: { type: 'integer', description: 'Pages it fetched (unchanged ones included).' },
    pages: { type: 'integer', description: 'Pages kept as knowledge after the last sync.' },
    skipped: {
      type: 'array',
      description: 'What was not taken, and why, in words (robots.txt, not found, not a web page, refused address, cut at the size limit…).',
      items: { type: 'object', properties: { url: { type: 'string' }, reason: { type: 'string' } } },
    },
    error: { type: ['string', 'null'], description: 'Why the last sync failed (status failed).' },
    last_synced_at: { type: ['string', 'null'], format: 'date-time' },
    next_sync_at: { type: ['string', 'null'], format: 'date-time' },
    file: { type: ['object', 'null'], properties: { bytes: { type: 'integer' }, type: { type: ['string', 'null'] } } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const validateSource = compileBodyValidator(sourceBody);
function checkSource(body: unknown): SourceInput {
  try {
    return validateSource(body) as SourceInput;
  } catch (err) {
    if (err instanceof AppError && err.code === 'validation_failed') throw new AppError('unprocessable', err.message, err.details);
    throw err;
  }
}

export function knowledgeSourceRoutes(sources: KnowledgeSources): RouteDefinition[] {
  return [
    route({
      method: 'post',
      path: '/v1/knowledge/sources',
      tag: 'knowledge',
      summary:
        `Add a website (a start URL) or a sitemap. It is fetched at once, then again by its schedule: robots.txt obeyed, the same host only, ` +
        `pages up to ${MAX_PAGE_BYTES / MB} MB. A URL the outbound rules refuse is 422 naming the rule (a private address…).`,
      access: 'manager',
      body: { type: 'object' },
      describedBody: { contentType: 'application/json', schema: sourceBody, required: true },
      responses: {
        201: { description: 'Added and queued.', schema: { type: 'object', properties: { source: sourceSchema } } },
        422: { description: 'A field is wrong, or the URL is refused by the outbound rules; error.details names the field and the rule.' },
      },
      async handler({ body, workspaceId }) {
        return { status: 201, body: { source: await sources.create(workspaceId, checkSource(body)) } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/sources',
      tag: 'knowledge',
      summary: "The workspace's websites, sitemaps and files, newest first, each with its last sync's progress.",
      access: 'member',
      responses: { 200: { description: 'The sources.', schema: { type: 'object', properties: { sources: { type: 'array', items: sourceSchema } } } } },
      async handler({ workspaceId }) {
        return { status: 200, body: { sources: await sources.list(workspaceId) } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/sources/{id}',
      tag: 'knowledge',
      summary: 'One source: its status, the pages found, fetched and kept, what was skipped and why, the last and next sync.',
      access: 'member',
      responses: { 200: { description: 'The source.', schema: sourceSchema }, 404: { description: 'No such source in this workspace.' } },
      async handler({ params, workspaceId }) {
        return { status: 200, body: await sources.get(workspaceId, params.id!) };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/knowledge/sources/{id}',
      tag: 'knowledge',
      summary: 'Delete a source with its pages and passages: the AI no longer answers from them.',
      access: 'manager',
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such source in this workspace.' } },
      async handler({ params, workspaceId }) {
        await sources.remove(workspaceId, params.id!);
        return { status: 204 };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/sources/{id}/sync',
      tag: 'knowledge',
      summary: 'Sync a website or sitemap now (one engine at a time; a sync already running finishes first). Only changed pages are rewritten.',
      access: 'manager',
      responses: {
        202: { description: 'Queued; GET the source to follow its progress.', schema: { type: 'object', properties: { source: sourceSchema } } },
        404: { description: 'No such source in this workspace.' },
        409: { description: 'A file: upload it again to replace it.' },
      },
      async handler({ params, workspaceId }) {
        return { status: 202, body: { source: await sources.requestSync(workspaceId, params.id!) } };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/files',
      tag: 'knowledge',
      summary:
        `Upload a file as knowledge: PDF, DOCX, TXT, Markdown or HTML, up to ${MAX_FILE_BYTES / MB} MB. It is read at once and kept as a source of kind file; ` +
        'a file of the same name replaces it.',
      access: 'manager',
      describedBody: {
        contentType: 'multipart/form-data',
        required: true,
        schema: {
          type: 'object',
          required: ['file'],
          properties: {
            file: { type: 'string', format: 'binary' },
            language: { type: 'string', pattern: LANGUAGE_PATTERN, description: "The file's language; absent: what the file says, if anything." },
          },
        },
      },
      responses: {
        201: { description: 'Read and searchable.', schema: { type: 'object', properties: { source: sourceSchema } } },
        413: { description: `Larger than ${MAX_FILE_BYTES / MB} MB.` },
        422: { description: 'No file, or one that cannot be read (not a PDF, DOCX, text, Markdown or HTML file, or no text in it).' },
      },
      async handler({ req, workspaceId }) {
        const file = await readUpload(req);
        const source = await sources.uploadFile(workspaceId, file);
        const { id, kind, name, status, pages, skipped } = source;
        // skipped: a note when the file's text was cut (MAX_FILE_TEXT_BYTES).
        return { status: 201, body: { source: { id, kind, name, status, pages, skipped, file: source.file } } };
      },
    }),
  ];
}

/** The one file of a multipart body (and its `language` field), within MAX_FILE_BYTES. */
function readUpload(req: Request): Promise<FileInput> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    return Promise.reject(new AppError('unsupported_media_type', 'Send the file as multipart/form-data, in a field named file.'));
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: MAX_FILE_BYTES, fields: 5, fieldSize: 1024 } });
    } catch (err) {
      reject(new AppError('unprocessable', `The multipart body cannot be read: ${(err as Error).message}.`));
      return;
    }
    let file: FileInput | undefined;
    let tooLarge = false;
    let language: string | undefined;
    parser.on('field', (name, value) => {
      if (name === 'language') language = value.trim() || undefined;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || file) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // Past the limit the rest is read and dropped, so the client gets its 413 instead of a broken connection.
      stream.on('limit', () => {
        tooLarge = true;
        chunks.length = 0;
      });
      stream.on('end', () => {
        if (!tooLarge) file = { name: info.filename || 'file', contentType: info.mimeType || null, bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('error', (err: Error) => reject(new AppError('unprocessable', `The multipart body cannot be read: ${err.message}.`)));
    parser.on('close', () => {
      if (tooLarge) return reject(new AppError('payload_too_large', `The file is larger than ${MAX_FILE_BYTES / MB} MB, the most a file may have.`));
      if (!file) return reject(new AppError('unprocessable', 'No file: send it in a field named file.', [{ field: 'file', message: 'is missing' }]));
      if (language !== undefined && !new RegExp(LANGUAGE_PATTERN).test(language)) {
        return reject(new AppError('unprocessable', 'language must be a language tag such as en or nl.', [{ field: 'language', message: 'is not a language tag' }]));
      }
      resolve({ ...file, language: language ?? null });
    });
    req.pipe(parser);
  });
}
