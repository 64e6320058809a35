/**
 * A source map looked up without decoding it whole. Node's `SourceMap` turns every segment into
 * an object as it is made: for the server's bundle (420,000 segments) that is about 100 ms in
 * one block and 45 MB of heap kept, paid at the first stack formatted, which Node's streams do
 * on every destroy with an error (a fetch aborted mid-answer, issue 38). Here the segments are
 * decoded only up to the line a lookup asks for, keeping the running values of every 64th.
 */
export interface OriginalPosition {
  source: string;
  /** Zero-based, as in the map. */
  line: number;
  column: number;
}

const base64Values = new Int8Array(128).fill(-1);
for (const [index, character] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) {
  base64Values[character.charCodeAt(0)] = index;
}
const comma = ','.charCodeAt(0);
const semicolon = ';'.charCodeAt(0);

/** The running values after a segment (or at a line's start), and where the next segment begins. */
interface Cursor {
  offset: number;
  generatedColumn: number;
  source: number;
  line: number;
  column: number;
  /** Whether the segment named an original position (one of a single field does not). */
  mapped: boolean;
}

/** Lines of a bundle hold up to 40,000 segments: a lookup starts from the nearest kept cursor instead. */
const segmentsBetweenCursors = 64;

export class SourceMapLines {
  /** Per generated line decoded so far: a cursor at its start, then one every `segmentsBetweenCursors` segments. */
  private readonly lineCursors: Cursor[][] = [];
  private readonly scan: Cursor = { offset: 0, generatedColumn: 0, source: 0, line: 0, column: 0, mapped: false };

  constructor(
    private readonly mappings: string,
    private readonly sources: readonly string[],
  ) {}

  /** The original position of a zero-based generated line and column, if a segment at or before it on that line has one. */
  find(generatedLine: number, generatedColumn: number): OriginalPosition | undefined {
    const cursors = this.cursorsOf(generatedLine);
    if (cursors === undefined) return undefined;
    let low = 0;
    let high = cursors.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (cursors[middle]!.generatedColumn <= generatedColumn) low = middle;
      else high = middle - 1;
    }
    let found = { ...cursors[low]! };
    const next = { ...found };
    while (readSegment(this.mappings, next) && next.generatedColumn <= generatedColumn) found = { ...next };
    const sourcePath = found.mapped ? this.sources[found.source] : undefined;
    return sourcePath === undefined ? undefined : { source: sourcePath, line: found.line, column: found.column };
  }

  private cursorsOf(generatedLine: number): Cursor[] | undefined {
    const scan = this.scan;
    while (this.lineCursors.length <= generatedLine) {
      if (scan.offset > this.mappings.length) return undefined;
      scan.generatedColumn = 0;
      scan.mapped = false;
      const cursors = [{ ...scan }];
      let count = 0;
      while (readSegment(this.mappings, scan)) {
        if (++count % segmentsBetweenCursors === 0) cursors.push({ ...scan });
      }
      scan.offset++;
      this.lineCursors.push(cursors);
    }
    return this.lineCursors[generatedLine];
  }
}

/**
 * Reads the segment at the cursor (each field a base64 VLQ, relative to the one before it) into
 * it, moving it past the segment and its comma; false at the end of a line.
 */
function readSegment(mappings: string, cursor: Cursor): boolean {
  let offset = cursor.offset;
  let code = mappings.charCodeAt(offset);
  if (offset >= mappings.length || code === semicolon) return false;
  let field = 0;
  while (offset < mappings.length && code !== comma && code !== semicolon) {
    let value = 0;
    let shift = 0;
    let digit: number;
    do {
      digit = code < 128 ? base64Values[code]! : -1;
      if (digit < 0) throw new Error(`A source map has ${JSON.stringify(mappings.charAt(offset))} where base64 belongs (at ${offset}).`);
      value |= (digit & 31) << shift;
      shift += 5;
      code = mappings.charCodeAt(++offset);
    } while (digit & 32);
    const delta = value & 1 ? -(value >>> 1) : value >>> 1;
    if (field === 0) cursor.generatedColumn += delta;
    else if (field === 1) cursor.source += delta;
    else if (field === 2) cursor.line += delta;
    else if (field === 3) cursor.column += delta;
    field++;
  }
  cursor.mapped = field >= 4;
  cursor.offset = code === comma ? offset + 1 : offset;
  return true;
}
