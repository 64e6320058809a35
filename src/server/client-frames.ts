import { oversizedImage, type ClientCommand } from './client-commands.ts';
import {
  validateApproveFrame,
  validateEditFrame,
  validateMessageFrame,
  validateRegenerateFrame,
  validateStopFrame,
} from './client-frame-validators.ts';

/** One validator per frame type, so an error speaks of the frame that was meant. */
const frameValidators = new Map<unknown, typeof validateMessageFrame>([
  ['message', validateMessageFrame],
  ['stop', validateStopFrame],
  ['approve', validateApproveFrame],
  ['regenerate', validateRegenerateFrame],
  ['edit', validateEditFrame],
]);

export type ParsedFrame = { ok: true; command: ClientCommand } | { ok: false; message: string };

export const notJsonFrameMessage = 'Frames must be JSON, e.g. {"type":"message","content":"Hello"}.';

/** Checks an already parsed frame against the frame types a client may send. */
export function validateClientFrame(data: unknown): ParsedFrame {
  const type = (data as { type?: unknown } | null)?.type;
  const validate = frameValidators.get(type);
  if (!validate) {
    return { ok: false, message: `Unknown frame type ${JSON.stringify(type)}: send "message", "stop", "approve", "regenerate" or "edit".` };
  }
  if (validate(data)) {
    const command = data as ClientCommand;
    const oversized = command.type === 'message' ? oversizedImage(command.images, (index) => `/images/${index}`) : undefined;
    return oversized ? { ok: false, message: `Invalid message frame: ${oversized}` } : { ok: true, command };
  }
  const [failure] = validate.errors ?? [];
  return { ok: false, message: `Invalid ${String(type)} frame: ${failure?.instancePath || 'frame'} ${failure?.message ?? ''}`.trim() };
}
