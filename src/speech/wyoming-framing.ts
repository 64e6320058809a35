/**
 * The Wyoming protocol's framing (the published event format of rhasspy/wyoming): one JSON header
 * line `{"type", "data"?, "data_length"?, "payload_length"?}` and a newline, then `data_length`
 * bytes of JSON data (merged over the header's `data`), then `payload_length` bytes of payload
 * (PCM audio).
 */
export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

export class WyomingProtocolError extends Error {
  override name = 'WyomingProtocolError';
}

/** The protocol version Hearth says it speaks in each header. */
const protocolVersion = '1.5.3';
const newline = 0x0a;
const maxHeaderBytes = 1024 * 1024;
const maxDataBytes = 8 * 1024 * 1024;
const maxPayloadBytes = 16 * 1024 * 1024;

export function encodeWyomingEvent(event: { type: string; data?: Record<string, unknown>; payload?: Buffer }): Buffer {
  const data = event.data && Object.keys(event.data).length > 0 ? Buffer.from(JSON.stringify(event.data), 'utf8') : undefined;
  const header: Record<string, unknown> = { type: event.type, version: protocolVersion };
  if (data) header.data_length = data.length;
  if (event.payload && event.payload.length > 0) header.payload_length = event.payload.length;
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), ...(data ? [data] : []), ...(event.payload && event.payload.length > 0 ? [event.payload] : [])]);
}

interface PendingHeader {
  type: string;
  data: Record<string, unknown>;
  dataLength: number;
  payloadLength: number;
}

/** Reads events from a byte stream however it is cut into packets: push each chunk, take the events it completes. */
export class WyomingEventReader {
  private buffered: Buffer = Buffer.alloc(0);
  private pending: PendingHeader | undefined;

  /** The events the chunk completes, in order; throws WyomingProtocolError on a malformed stream. */
  push(chunk: Buffer): WyomingEvent[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const events: WyomingEvent[] = [];
    for (;;) {
      if (!this.pending) {
        const end = this.buffered.indexOf(newline);
        if (end === -1) {
          if (this.buffered.length > maxHeaderBytes) throw new WyomingProtocolError(`a header line longer than ${maxHeaderBytes} bytes`);
          return events;
        }
        this.pending = parseHeader(this.buffered.subarray(0, end));
        this.buffered = this.buffered.subarray(end + 1);
      }
      const { dataLength, payloadLength } = this.pending;
      if (this.buffered.length < dataLength + payloadLength) return events;
      const data = dataLength > 0 ? { ...this.pending.data, ...parseData(this.buffered.subarray(0, dataLength)) } : this.pending.data;
      const payload = payloadLength > 0 ? Buffer.from(this.buffered.subarray(dataLength, dataLength + payloadLength)) : undefined;
      events.push({ type: this.pending.type, data, ...(payload && { payload }) });
      this.buffered = this.buffered.subarray(dataLength + payloadLength);
      this.pending = undefined;
    }
  }
}

function parseHeader(line: Buffer): PendingHeader {
  let header: unknown;
  try {
    header = JSON.parse(line.toString('utf8'));
  } catch {
    throw new WyomingProtocolError(`a header line that is not JSON: ${line.toString('utf8').slice(0, 80)}`);
  }
  if (typeof header !== 'object' || header === null || typeof (header as { type?: unknown }).type !== 'string') {
    throw new WyomingProtocolError('a header without a type');
  }
  const { type, data, data_length: dataLength = 0, payload_length: payloadLength = 0 } = header as Record<string, unknown>;
  if (!isLength(dataLength, maxDataBytes) || !isLength(payloadLength, maxPayloadBytes)) throw new WyomingProtocolError(`a bad data_length or payload_length in a ${String(type)} event`);
  return { type: type as string, data: isObject(data) ? data : {}, dataLength, payloadLength };
}

function parseData(bytes: Buffer): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new WyomingProtocolError('event data that is not JSON');
  }
  if (!isObject(data)) throw new WyomingProtocolError('event data that is not a JSON object');
  return data;
}

function isLength(value: unknown, limit: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= limit;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
