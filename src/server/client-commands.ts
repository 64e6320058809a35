import { Type, type Static } from '@sinclair/typebox';
import { Ajv } from 'ajv';

const Attachment = Type.Object({ name: Type.String({ minLength: 1 }), path: Type.String({ minLength: 1 }) });

export const MessageBody = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: 1_000_000 }),
    images: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 16 })),
    files: Type.Optional(Type.Array(Attachment, { maxItems: 64 })),
  },
  { additionalProperties: false },
);

/** What a client may send over a session's WebSocket (DESIGN §4). */
const ClientCommand = Type.Union([
  Type.Composite([Type.Object({ type: Type.Literal('message') }), MessageBody], { additionalProperties: false }),
  Type.Object({ type: Type.Literal('stop') }, { additionalProperties: false }),
]);

export type ClientCommand = Static<typeof ClientCommand>;

const validate = new Ajv({ allErrors: false }).compile(ClientCommand);

export type ParsedFrame = { ok: true; command: ClientCommand } | { ok: false; message: string };

export function parseClientFrame(frame: string): ParsedFrame {
  let data: unknown;
  try {
    data = JSON.parse(frame);
  } catch {
    return { ok: false, message: 'Frames must be JSON, e.g. {"type":"message","content":"Hello"}.' };
  }
  const type = (data as { type?: unknown } | null)?.type;
  if (type !== 'message' && type !== 'stop') {
    return { ok: false, message: `Unknown frame type ${JSON.stringify(type)}: send "message" or "stop".` };
  }
  if (validate(data)) return { ok: true, command: data };
  const [failure] = validate.errors ?? [];
  return { ok: false, message: `Invalid ${type} frame: ${failure?.instancePath || 'frame'} ${failure?.message ?? ''}`.trim() };
}
