import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import type { Tool, ToolContext } from '../tool.ts';
import { describeSize, fetchLimited, hostOf, megabyte, parseHttpUrl } from './http/fetch-limited.ts';
import { createNetworkGuard, type NetworkGuard } from './http/network-guard.ts';
import { createPathPolicy } from '../host-files/path-policy.ts';
import { ChangedWhileChecked, openPinned, readFlags } from '../host-files/pinned-files.ts';
import { toolFailure, type ToolFailure } from '../../failure.ts';

const parameters = Type.Object(
  {
    path: Type.Optional(Type.String({ description: 'Image file; relative to the session folder' })),
    url: Type.Optional(Type.String({ description: 'http(s) URL of an image' })),
  },
  { additionalProperties: false },
);

const maximumBytes = 10 * megabyte;
const downloadTimeoutMs = 30_000;

const signatures: { format: string; matches: (bytes: Buffer) => boolean }[] = [
  { format: 'png', matches: (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { format: 'jpeg', matches: (bytes) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff },
  { format: 'gif', matches: (bytes) => ['GIF87a', 'GIF89a'].includes(bytes.subarray(0, 6).toString('latin1')) },
  { format: 'webp', matches: (bytes) => bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP' },
];

export function imageFormatOf(bytes: Buffer): string | undefined {
  return signatures.find((signature) => signature.matches(bytes))?.format;
}

type Loaded = { bytes: Buffer; source: string };

/** Loads an image so the model can look at it in its next step; the image goes to the model's context only. */
export interface ImageViewOptions {
  config: Config;
  /** Refuses Hearth's own API, cloud metadata and (HTTP_BLOCK_PRIVATE) private addresses; a default guard otherwise. */
  network?: NetworkGuard;
  /** The folder relative settings (DATA_DIR, `.env`…) are resolved from: the server's working folder. */
  workingFolder?: string;
}

export function createImageViewTool(options: ImageViewOptions): Tool<Static<typeof parameters>> {
  const { config } = options;
  const network = options.network ?? createNetworkGuard({ blockPrivate: config.HTTP_BLOCK_PRIVATE });
  const policy = createPathPolicy(options);

  async function fromPath(requested: string, context: ToolContext): Promise<Loaded | ToolFailure> {
    const decided = await policy.decide(requested, 'read', context);
    if (!decided.ok) return toolFailure(decided.message);
    if (decided.leaf === undefined) return toolFailure(`There is no file at ${requested}.`);
    if (!decided.leaf.isFile()) return toolFailure(`${requested} is not a file.`);
    const size = Number(decided.leaf.size);
    if (size > maximumBytes) return toolFailure(`${requested} is ${describeSize(size)}; images up to ${describeSize(maximumBytes)} can be viewed.`);
    let file;
    try {
      file = await openPinned(decided.real, readFlags, decided.leaf);
    } catch (error) {
      if (error instanceof ChangedWhileChecked) return toolFailure(`Refused: ${requested} changed while it was being checked; nothing was read.`);
      const code = (error as NodeJS.ErrnoException).code;
      return toolFailure(code === 'ENOENT' ? `There is no file at ${requested}.` : `Cannot open ${requested} (${code}).`);
    }
    try {
      // Read no further than the size checked: the file may grow meanwhile.
      const bytes = Buffer.alloc(size);
      const { bytesRead } = await file.read(bytes, 0, size, 0);
      return { bytes: bytes.subarray(0, bytesRead), source: requested };
    } finally {
      await file.close();
    }
  }

  async function fromUrl(text: string, signal: AbortSignal): Promise<Loaded | ToolFailure> {
    const url = parseHttpUrl(text);
    if (!url) return toolFailure(`"${text}" is not an http(s) URL.`);
    const fetched = await fetchLimited({ url: url.href, timeoutMs: downloadTimeoutMs, maxBytes: maximumBytes, signal, fetch: network.fetch });
    if (!fetched.ok) return toolFailure(fetched.message);
    const { response } = fetched;
    if (response.status >= 400) return toolFailure(`${url.href} answered ${response.status} ${response.statusText}.`);
    if (response.cutAtLimit) return toolFailure(`${url.href} is larger than ${describeSize(maximumBytes)}; images up to that size can be viewed.`);
    return { bytes: response.bytes, source: response.url };
  }

  return {
    name: 'image_view',
    description: 'Look at an image (png, jpeg, gif or webp, up to 10 MB) from a file path or a URL; you see it in your next step.',
    parameters,
    subject: (args) => args.path ?? args.url ?? '',
    // A path is not an absolute URL, so it is read as text.
    subjectParts: ['url'],
    async precheck(args, context) {
      if (args.path === undefined) return undefined;
      const decided = await policy.decide(args.path, 'read', context);
      return decided.ok ? undefined : decided.message;
    },
    async mustAsk(args, context) {
      if (args.path === undefined || context === undefined) return undefined;
      const decided = await policy.decide(args.path, 'read', context);
      return decided.ok ? decided.ask : undefined;
    },
    // A picture can hold text meant for the model as well as a page can.
    untrustedSource: (args) => (args.url === undefined ? undefined : hostOf(args.url)),
    outflow: (args) => (args.url === undefined ? undefined : { request: [args.url] }),
    async execute(args, context) {
      if ((args.path === undefined) === (args.url === undefined)) return toolFailure('Send exactly one of path or url.');
      const loaded =
        args.path !== undefined
          ? await fromPath(args.path, context)
          : await fromUrl(args.url!, context.signal);
      if (!('bytes' in loaded)) return loaded;
      const format = imageFormatOf(loaded.bytes);
      if (!format) return toolFailure(`${loaded.source} is not a png, jpeg, gif or webp image.`);
      const description = `${format} image, ${describeSize(loaded.bytes.length)}, from ${loaded.source}`;
      return {
        output: `Loaded ${description}. It is attached to your next step.`,
        success: true,
        metadata: { image: { base64: loaded.bytes.toString('base64'), description } },
      };
    },
    dispose: () => network.close(),
  };
}
