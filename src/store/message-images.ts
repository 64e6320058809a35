import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** How a stored message names an image kept as a file: `image:<name>`. */
const referencePrefix = 'image:';
const namePattern = /^[0-9a-f]{24}\.(png|jpg|gif|webp|bin)$/;

const mediaTypes: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', bin: 'application/octet-stream' };

/**
 * The images of stored messages, kept as files under `<DATA_DIR>/images/<session>/`
 * rather than as base64 in the database: a row stays small, so storing or reading a
 * conversation never writes or parses megabytes on the event loop, and the bytes are read
 * from disk without blocking other sessions. Messages hold `image:<name>` references;
 * older rows that hold base64 are read as they are.
 */
export class MessageImages {
  constructor(private readonly directory: string) {}

  /** Writes base64 images as files; answers their references, in order. */
  async save(sessionId: string, images: readonly string[]): Promise<string[]> {
    if (images.length === 0) return [];
    const folder = this.folder(sessionId);
    await mkdir(folder, { recursive: true });
    return Promise.all(
      images.map(async (base64) => {
        const bytes = Buffer.from(base64, 'base64');
        const name = `${randomBytes(12).toString('hex')}.${extensionOf(bytes)}`;
        await writeFile(path.join(folder, name), bytes);
        return referencePrefix + name;
      }),
    );
  }

  /** The base64 the model needs for each image; a reference whose file is gone is left out. */
  async load(sessionId: string, images: readonly string[]): Promise<string[]> {
    const loaded = await Promise.all(
      images.map(async (image) => {
        if (!image.startsWith(referencePrefix)) return image;
        const file = this.file(sessionId, image.slice(referencePrefix.length));
        const bytes = file && (await readFile(file).catch(() => undefined));
        return bytes?.toString('base64');
      }),
    );
    return loaded.filter((image): image is string => image !== undefined);
  }

  /** The file of an image name, and its media type; undefined for a name that is not one. */
  locate(sessionId: string, name: string): { file: string; mediaType: string } | undefined {
    const file = this.file(sessionId, name);
    return file ? { file, mediaType: mediaTypes[path.extname(name).slice(1)] ?? 'application/octet-stream' } : undefined;
  }

  async removeSession(sessionId: string): Promise<void> {
    await rm(this.folder(sessionId), { recursive: true, force: true });
  }

  private folder(sessionId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error(`Invalid session id for images: ${sessionId}`);
    return path.join(this.directory, sessionId);
  }

  private file(sessionId: string, name: string): string | undefined {
    return namePattern.test(name) ? path.join(this.folder(sessionId), name) : undefined;
  }
}

/** A stored image reference as a URL the page can load; base64 from older rows is left as it is. */
export function imageUrl(sessionId: string, image: string): string {
  return image.startsWith(referencePrefix) ? `/sessions/${sessionId}/images/${image.slice(referencePrefix.length)}` : image;
}

function extensionOf(bytes: Buffer): string {
  if (bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))) return 'png';
  if (bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return 'jpg';
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'gif';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return 'bin';
}
