import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { describeSize, megabyte } from '../builtin/http/fetch-limited.ts';
import { imageFormatOf } from '../builtin/image-view.ts';
import type { ToolOutput } from '../tool.ts';
import { keepHead } from '../truncate.ts';

/** As much text as terminal, http_request and code_exec hand the model. */
export const maximumOutputCharacters = 20_000;

/** The largest image passed to the model, as with image_view. */
const maximumImageBytes = 10 * megabyte;

interface Attached {
  base64: string;
  description: string;
}

/**
 * What the model gets from an MCP tool's answer. Text blocks are joined with blank lines, in
 * order; every other block becomes one short line in its place. The first image in a format the
 * backends take (png, jpeg, gif, webp) reaches the model the way image_view's does, through
 * `metadata.image`, which the agent loop turns into a user message in the model's context; the
 * loop carries one image per call, so any further image is only named. `structuredContent`
 * stands in when there are no content blocks at all. `isError` gives `success:false` with the
 * server's words.
 */
export function toolOutputOfMcpResult(result: CallToolResult): ToolOutput {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const pieces: string[] = [];
  let attached: Attached | undefined;
  for (const block of blocks) {
    if (block.type === 'image' && attached === undefined) {
      const image = attachableImage(block.data, block.mimeType);
      if (typeof image !== 'string') {
        attached = image;
        pieces.push(`[${image.description}: attached to your next step]`);
        continue;
      }
      pieces.push(image);
      continue;
    }
    pieces.push(describeBlock(block));
  }
  // Servers repeat structuredContent in their content blocks (as text, or server-filesystem's images as base64), so it only stands in for none.
  if (blocks.length === 0) {
    const structured = result.structuredContent ?? ('toolResult' in result ? result['toolResult'] : undefined);
    if (structured !== undefined) pieces.push(JSON.stringify(structured));
  }
  const text = pieces.filter((piece) => piece !== '').join('\n\n');
  const output = keepHead(text, maximumOutputCharacters, 'ask the tool for less, e.g. a narrower query or a smaller range');
  if (result.isError === true) return { output: output || 'The tool reported an error without saying what went wrong.', success: false };
  return {
    output: output || '(no output)',
    success: true,
    ...(attached && { metadata: { image: attached } }),
  };
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[Image: ${block.mimeType}, ${describeBase64Size(block.data)}; not shown, the model sees one image per call]`;
    case 'audio':
      return `[Audio: ${block.mimeType}, ${describeBase64Size(block.data)}; not shown, audio does not reach the model]`;
    case 'resource': {
      const { resource } = block;
      const type = resource.mimeType ? ` (${resource.mimeType})` : '';
      if ('text' in resource && typeof resource.text === 'string') return `[Resource ${resource.uri}${type}]\n${resource.text}`;
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return `[Resource ${resource.uri}: ${resource.mimeType ?? 'binary data'}, ${describeBase64Size(blob)}; not shown]`;
    }
    case 'resource_link': {
      const details = [block.mimeType, block.size !== undefined ? describeSize(block.size) : undefined].filter(Boolean).join(', ');
      const about = block.description ? `: ${block.description}` : '';
      return `[Resource link "${block.title ?? block.name}" ${block.uri}${details ? ` (${details})` : ''}${about}]`;
    }
    default:
      return `[Content of type "${(block as { type: string }).type}"; not shown]`;
  }
}

/** The image as image_view hands it on, or the line naming it when the model cannot have it. */
function attachableImage(base64: string, mimeType: string): Attached | string {
  const size = Buffer.byteLength(base64, 'base64');
  if (size > maximumImageBytes) return `[Image: ${mimeType}, ${describeSize(size)}; not shown, images up to ${describeSize(maximumImageBytes)} reach the model]`;
  // The backends read the format from the bytes (openai-messages.ts), so it is checked there, not taken from mimeType.
  const format = imageFormatOf(Buffer.from(base64.slice(0, 24), 'base64'));
  if (!format) return `[Image: ${mimeType}, ${describeSize(size)}; not shown, only png, jpeg, gif and webp reach the model]`;
  return { base64, description: `${format} image, ${describeSize(size)}` };
}

function describeBase64Size(base64: string): string {
  return describeSize(Buffer.byteLength(base64, 'base64'));
}
