const maximumPayloadCharacters = 400;
const hexPreviewBytes = 16;
const controlCharacters = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** One line for a received message: `topic payload`, `(retained)` when the broker kept it. */
export function messageLine(message: { topic: string; payload: Buffer; retained: boolean }): string {
  return `${message.topic} ${payloadText(message.payload)}${message.retained ? ' (retained)' : ''}`;
}

/** A payload as one line of text: JSON compacted, other text as is, binary as its size and a hex preview; long ones cut. */
export function payloadText(payload: Buffer): string {
  if (payload.length === 0) return '(empty)';
  const text = decodeText(payload);
  if (text === undefined) {
    const preview = payload.subarray(0, hexPreviewBytes).toString('hex').replace(/(..)(?!$)/g, '$1 ');
    return `(binary, ${payload.length} bytes: ${preview}${payload.length > hexPreviewBytes ? ' …' : ''})`;
  }
  const oneLine = compactJson(text) ?? text.replace(/\r?\n/g, '\\n');
  if (oneLine.length <= maximumPayloadCharacters) return oneLine;
  return `${oneLine.slice(0, maximumPayloadCharacters)}… (cut: ${oneLine.length} characters, ${payload.length} bytes)`;
}

function decodeText(payload: Buffer): string | undefined {
  try {
    const text = strictUtf8.decode(payload);
    return controlCharacters.test(text) ? undefined : text;
  } catch {
    return undefined;
  }
}

function compactJson(text: string): string | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.stringify(JSON.parse(trimmed));
  } catch {
    return undefined;
  }
}
