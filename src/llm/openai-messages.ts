// Our messages and tools in the shape of the OpenAI chat-completions API.
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ToolDefinition } from './types.ts';

/** `holdImage` may stand a marker in for an image's data URL (see DeferredStrings). */
export function toOpenAIMessage(message: ChatMessage, holdImage: (dataUrl: string) => string = (dataUrl) => dataUrl): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      if (!message.images?.length) return { role: 'user', content: message.content };
      return { role: 'user', content: [{ type: 'text', text: message.content }, ...message.images.map((image) => toImagePart(image, holdImage))] };
    case 'assistant':
      if (!message.tool_calls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.tool_calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id ?? '', content: message.content };
  }
}

export function toOpenAITool(tool: ToolDefinition): ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

function toImagePart(base64: string, holdImage: (dataUrl: string) => string): ChatCompletionContentPart {
  return { type: 'image_url', image_url: { url: holdImage(`data:${imageMimeType(base64)};base64,${base64}`) } };
}

/** The image format, read from the magic bytes at the start of the base64 data. */
export function imageMimeType(base64: string): string {
  const head = Buffer.from(base64.slice(0, 16), 'base64');
  const startsWith = (bytes: number[], offset = 0) => bytes.every((byte, position) => head[offset + position] === byte);
  if (startsWith([0x89, 0x50, 0x4e, 0x47])) return 'image/png';
  if (startsWith([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith([0x47, 0x49, 0x46, 0x38])) return 'image/gif';
  if (startsWith([0x52, 0x49, 0x46, 0x46]) && startsWith([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return 'image/png';
}
