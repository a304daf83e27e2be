/**
 * A CSV file's bytes made text (contract 4.5): what its first bytes say it is (empty, a spreadsheet workbook, UTF-16,
 * binary), UTF-8 checked as it streams (a BOM tolerated, a sequence split across chunks carried over), and the message
 * for bytes that are not UTF-8 (the line, and what it reads as in Windows-1252, Excel's plain CSV). Each problem is a
 * FileProblem, which fails the whole job with a message that says how to save the file instead.
 */
import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';

export class FileProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FileProblem';
  }
}

/** What every file-level message ends with: how to save the file so that it imports. */
export const SAVE_AS_CSV_UTF8 = "save it from the spreadsheet as 'CSV UTF-8 (Comma delimited)' (.csv)";

/** Windows-1252's 0x80–0x9F (Node's TextDecoder reads them as Latin-1 control characters); the rest is Latin-1. */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const cp1252 = (bytes: Buffer) =>
  Array.from(bytes, (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b))).join('');

/** Bytes a UTF-8 sequence with this lead byte has (0: not a lead byte). */
const sequenceLength = (lead: number) =>
  lead < 0x80
    ? 1
    : lead >= 0xc2 && lead <= 0xdf
      ? 2
      : lead >= 0xe0 && lead <= 0xef
        ? 3
        : lead >= 0xf0 && lead <= 0xf4
          ? 4
          : 0;

/** Offset of the first byte that is not valid UTF-8 (overlongs and surrogates included), or -1. */
export function firstInvalidUtf8(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = sequenceLength(lead);
    if (length === 0 || i + length > bytes.length) return i;
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    const second = bytes[i + 1]!;
    if (lead === 0xe0 && second < 0xa0) return i;
    if (lead === 0xed && second > 0x9f) return i;
    if (lead === 0xf0 && second < 0x90) return i;
    if (lead === 0xf4 && second > 0x8f) return i;
    i += length;
  }
  return -1;
}

/** Where the incomplete UTF-8 sequence at the end of `bytes` starts (bytes.length if it ends complete). */
function completeUpTo(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = sequenceLength(byte);
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** The message for bytes that are not UTF-8: the line, and what it says read as Windows-1252, Excel's plain CSV. */
function notUtf8(bytes: Buffer, offset: number, linesBefore: number): FileProblem {
  const lineStart = bytes.lastIndexOf(0x0a, offset) + 1;
  let lineEnd = bytes.indexOf(0x0a, offset);
  if (lineEnd === -1) lineEnd = bytes.length;
  let line = 1 + linesBefore;
  for (let i = 0; i < lineStart; i++) if (bytes[i] === 0x0a) line++;
  const start = Math.max(lineStart, offset - 30);
  const sample = cp1252(bytes.subarray(start, Math.min(lineEnd, offset + 30))).replace(/[\r\n]/g, '');
  return new FileProblem(
    `the file is not UTF-8 text: line ${line} holds bytes that are not UTF-8 (read as Windows-1252, the encoding ` +
      `of Excel's plain 'CSV', they say ${JSON.stringify(sample)}); nothing was imported, so that no text is ` +
      `stored garbled: ${SAVE_AS_CSV_UTF8}`,
  );
}

/**
 * The problem of a file's first bytes that makes it no CSV text of the format (an empty file, a spreadsheet
 * workbook, UTF-16 or other binary data), or undefined.
 */
export function startProblem(start: Buffer): FileProblem | undefined {
  if (start.length === 0) return new FileProblem(`the file is empty (0 bytes): ${SAVE_AS_CSV_UTF8}`);
  const begins = (...bytes: number[]) => bytes.every((b, i) => start[i] === b);
  if (begins(0x50, 0x4b, 0x03, 0x04))
    return new FileProblem(
      `the file is a spreadsheet workbook (.xlsx or .ods), not CSV text: open it in the spreadsheet and ${SAVE_AS_CSV_UTF8}`,
    );
  if (begins(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1))
    return new FileProblem(
      `the file is an Excel 97-2003 workbook (.xls), not CSV text: open it in the spreadsheet and ${SAVE_AS_CSV_UTF8}`,
    );
  const head = start.subarray(0, 8192);
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < head.length; i++) if (head[i] === 0) i % 2 === 0 ? evenZeros++ : oddZeros++;
  const utf16 = begins(0xff, 0xfe) || begins(0xfe, 0xff) || Math.max(evenZeros, oddZeros) > head.length / 4;
  if (utf16) return new FileProblem(`the file is UTF-16 text (Excel's 'Unicode Text'), not UTF-8: ${SAVE_AS_CSV_UTF8}`);
  if (evenZeros + oddZeros > 0)
    return new FileProblem(`the file is not CSV text (it contains NUL bytes): ${SAVE_AS_CSV_UTF8}`);
  return undefined;
}

/**
 * Checks the first bytes of a file (all of it when `whole`) and decodes them: throws a FileProblem for an empty file,
 * a workbook, UTF-16 or binary data, or bytes that are not UTF-8 (an incomplete sequence cut at the end of a part
 * is fine). A BOM is dropped.
 */
export function decodeStart(start: Buffer, whole: boolean): string {
  const problem = startProblem(start);
  if (problem) throw problem;
  const upTo = whole ? start.length : completeUpTo(start);
  const bytes = start.subarray(0, upTo);
  if (!isUtf8(bytes)) throw notUtf8(bytes, firstInvalidUtf8(bytes), 0);
  const text = bytes.toString('utf8');
  return text.startsWith('\ufeff') ? text.slice(1) : text;
}

/**
 * Bytes in, UTF-8 text out, checked as it streams (memory stays a chunk): the first chunk as decodeStart checks it,
 * every chunk for NUL bytes and invalid UTF-8, a sequence split across chunks carried over.
 */
export class Utf8Text extends Transform {
  private carry = Buffer.alloc(0);
  private lines = 0;
  private started = false;
  bytes = 0;

  constructor() {
    super({ readableObjectMode: false, decodeStrings: true, encoding: 'utf8' });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (chunk.length === 0) {
      done();
      return;
    }
    try {
      let data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
      if (!this.started) {
        this.started = true;
        const problem = startProblem(data);
        if (problem) throw problem;
        if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) data = data.subarray(3);
      } else if (chunk.includes(0)) {
        throw new FileProblem(`the file is not CSV text (it contains NUL bytes): ${SAVE_AS_CSV_UTF8}`);
      }
      const upTo = completeUpTo(data);
      this.carry = Buffer.from(data.subarray(upTo));
      this.pass(data.subarray(0, upTo));
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      if (this.carry.length > 0) this.pass(this.carry);
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  private pass(bytes: Buffer): void {
    if (!isUtf8(bytes)) throw notUtf8(bytes, firstInvalidUtf8(bytes), this.lines);
    for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) this.lines++;
    if (bytes.length > 0) this.push(bytes.toString('utf8'));
  }
}
