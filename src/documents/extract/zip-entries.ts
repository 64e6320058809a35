import { inflateRawSync } from 'node:zlib';

/** An entry of a ZIP archive as its central directory declares it. */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated (all a Word document uses). */
  method: number;
  compressedSize: number;
  localHeaderOffset: number;
}

const endSignature = 0x06054b50;
const entrySignature = 0x02014b50;
const localSignature = 0x04034b50;
const endLength = 22;
const longestComment = 0xffff;

/**
 * The entries of a ZIP's central directory, read without inflating anything; undefined when the
 * archive has no readable directory or is ZIP64 (a Word document never is).
 */
export function zipEntries(zip: Buffer): ZipEntry[] | undefined {
  let end = -1;
  for (let at = zip.length - endLength; at >= Math.max(0, zip.length - endLength - longestComment); at -= 1) {
    if (zip.readUInt32LE(at) === endSignature) {
      end = at;
      break;
    }
  }
  if (end < 0) return undefined;
  const count = zip.readUInt16LE(end + 10);
  const directoryOffset = zip.readUInt32LE(end + 16);
  if (count === 0xffff || directoryOffset === 0xffffffff) return undefined;
  const entries: ZipEntry[] = [];
  let at = directoryOffset;
  for (let index = 0; index < count; index += 1) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== entrySignature) return undefined;
    const nameLength = zip.readUInt16LE(at + 28);
    entries.push({
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      method: zip.readUInt16LE(at + 10),
      compressedSize: zip.readUInt32LE(at + 20),
      localHeaderOffset: zip.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}

/**
 * How many bytes the entries hold once inflated, counted by inflating them with a ceiling of
 * `limit` in all: what they declare is not trusted (jszip checks a declared size only after inflating
 * all of it). Undefined past the limit, or for an entry that cannot be inflated.
 */
export function inflatedBytes(zip: Buffer, entries: ZipEntry[], limit: number): number | undefined {
  let total = 0;
  for (const entry of entries) {
    const header = entry.localHeaderOffset;
    if (header + 30 > zip.length || zip.readUInt32LE(header) !== localSignature) return undefined;
    const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28);
    const data = zip.subarray(start, start + entry.compressedSize);
    if (entry.method === 0) total += data.length;
    else if (entry.method === 8) {
      try {
        total += inflateRawSync(data, { maxOutputLength: Math.max(1, limit - total + 1) }).length;
      } catch {
        return undefined;
      }
    } else return undefined;
    if (total > limit) return undefined;
  }
  return total;
}
