/**
 * One small file out of a zip (a DOCX's metadata: docProps/core.xml, word/styles.xml). mammoth reads the document
 * itself but gives no metadata; this reads only the central directory and the one entry asked for, stored or deflated,
 * never more than `maxBytes` of it. ZIP64 archives, encryption and other methods give null: the metadata is optional.
 */
import { inflateRawSync } from 'node:zlib';

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;

/** The entry's bytes, or null when the zip has no such entry or it cannot be read within `maxBytes`. */
export function readZipEntry(zip: Uint8Array, name: string, maxBytes = 1024 * 1024): Buffer | null {
  const bytes = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength);
  // The end record is in the last 22 bytes, plus a comment of up to 65,535.
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (bytes.readUInt32LE(i) === END_OF_DIRECTORY) {
      end = i;
      break;
    }
  }
  if (end < 0) return null;
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  for (let n = 0; n < count && at + 46 <= bytes.length; n++) {
    if (bytes.readUInt32LE(at) !== DIRECTORY_ENTRY) return null;
    const flags = bytes.readUInt16LE(at + 8);
    const method = bytes.readUInt16LE(at + 10);
    const compressed = bytes.readUInt32LE(at + 20);
    const size = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const next = at + 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
    const local = bytes.readUInt32LE(at + 42);
    if (bytes.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      if (flags & 1 || size > maxBytes || local + 30 > bytes.length || bytes.readUInt32LE(local) !== LOCAL_HEADER) return null;
      const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
      const data = bytes.subarray(start, start + compressed);
      try {
        if (method === 0) return Buffer.from(data);
        if (method === 8) return inflateRawSync(data, { maxOutputLength: maxBytes });
      } catch {
        return null;
      }
      return null;
    }
    at = next;
  }
  return null;
}
