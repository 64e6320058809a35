import { StringDecoder } from 'node:string_decoder';
import { keepHeadAndTail } from './truncate.ts';

/** Keeps the head and a rolling tail of a stream, so memory stays bounded whatever the process prints. */
export class OutputCapture {
  private head = '';
  private tailChunks: string[] = [];
  private tailLength = 0;
  private total = 0;
  private readonly headCapacity: number;
  private readonly tailCapacity: number;

  constructor(capacity: number) {
    this.headCapacity = Math.floor(capacity / 2);
    this.tailCapacity = capacity - this.headCapacity;
  }

  get totalCharacters(): number {
    return this.total;
  }

  append(chunk: string): void {
    this.total += chunk.length;
    const headRoom = this.headCapacity - this.head.length;
    if (headRoom > 0) {
      this.head += chunk.slice(0, headRoom);
      chunk = chunk.slice(headRoom);
    }
    if (chunk === '') return;
    this.tailChunks.push(chunk);
    this.tailLength += chunk.length;
    while (this.tailChunks.length > 1 && this.tailLength - this.tailChunks[0]!.length >= this.tailCapacity) {
      this.tailLength -= this.tailChunks.shift()!.length;
    }
  }

  /** The output in at most `maxCharacters` (plus a note), keeping its head and tail; exact however much was dropped. */
  render(maxCharacters: number): string {
    const tail = this.tailChunks.join('').slice(-this.tailCapacity);
    const kept = this.head + tail;
    if (kept.length === this.total) return keepHeadAndTail(kept, maxCharacters);
    const half = Math.min(Math.floor(maxCharacters / 2), this.headCapacity, this.tailCapacity);
    const omitted = this.total - 2 * half;
    return `${this.head.slice(0, half)}\n… [${omitted} characters omitted] …\n${tail.slice(tail.length - half)}`;
  }
}

/** Shares the budget between the streams: each gets up to half, and what one leaves unused goes to the other. */
export function renderBoth(stdout: OutputCapture, stderr: OutputCapture, budget: number): { stdout: string; stderr: string } {
  const stderrShare = Math.min(stderr.totalCharacters, Math.max(Math.floor(budget / 2), budget - stdout.totalCharacters));
  return { stdout: stdout.render(budget - stderrShare), stderr: stderr.render(stderrShare) };
}

/** An OutputCapture fed with bytes, decoding UTF-8 across chunk boundaries. */
export class ByteOutputCapture extends OutputCapture {
  private readonly decoder = new StringDecoder('utf8');

  appendBytes(chunk: Buffer): void {
    this.append(this.decoder.write(chunk));
  }

  override render(maxCharacters: number): string {
    const rest = this.decoder.end();
    if (rest !== '') this.append(rest);
    return super.render(maxCharacters);
  }
}
