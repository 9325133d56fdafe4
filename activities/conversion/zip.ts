import { Inflate } from 'fflate';
import { formatBytes, type ConversionContext } from './context.js';
import { ConversionError } from './errors.js';

/**
 * A defensive ZIP reader for the container formats (docx, pptx, xlsx, epub, odf).
 *
 * - Reads the central directory only; never trusts a local header for sizes.
 * - Refuses an archive whose declared uncompressed total is over the limit, or whose entries claim a
 *   compression ratio past the limit, before inflating anything (zip bomb).
 * - Inflates each entry in small slices and stops as soon as the output passes the entry's declared
 *   size or the archive's remaining budget, so a lying header cannot make us inflate past the limit.
 * - Refuses encrypted entries and compression methods other than stored/deflate.
 */

export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

/** Entries an archive may hold; real documents have tens to a few thousand. */
const MAX_ENTRIES = 20_000;
/** The ratio check applies to entries at least this large (small XML parts compress very well). */
const RATIO_CHECK_MIN_BYTES = 1024 * 1024;
/** Compressed bytes fed to the inflater per step: deflate's ~1:1032 bound keeps overshoot ≤ ~16 MB. */
const INFLATE_SLICE = 16 * 1024;

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;

export function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5) && (bytes[3] === 4 || bytes[3] === 6);
}

export class ZipArchive {
  readonly entries: ReadonlyMap<string, ZipEntry>;
  private inflated = 0;

  private constructor(
    private readonly bytes: Uint8Array,
    entries: Map<string, ZipEntry>,
    private readonly ctx: ConversionContext,
    private readonly label: string,
  ) {
    this.entries = entries;
  }

  /** Parses the central directory and applies the declared-size checks. `label` names the file kind in messages. */
  static open(bytes: Uint8Array, ctx: ConversionContext, label = 'archive'): ZipArchive {
    const entries = readCentralDirectory(bytes, label);
    let declaredTotal = 0;
    for (const entry of entries.values()) {
      if (entry.flags & 1) {
        throw new ConversionError('encrypted', `This ${label} is encrypted (password-protected); remove the password and upload it again.`);
      }
      declaredTotal += entry.uncompressedSize;
    }
    if (declaredTotal > ctx.maxUncompressedBytes) {
      throw tooLarge(label, ctx, `its contents declare ${formatBytes(declaredTotal)} uncompressed`);
    }
    for (const entry of entries.values()) checkRatio(entry, entry.uncompressedSize, ctx, label);
    return new ZipArchive(bytes, entries, ctx, label);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Finds an entry by name, ignoring ASCII case (some writers vary the case of part names). */
  resolve(name: string): string | undefined {
    if (this.entries.has(name)) return name;
    const lower = name.toLowerCase();
    for (const key of this.entries.keys()) if (key.toLowerCase() === lower) return key;
    return undefined;
  }

  /** The bytes of an entry, or undefined when absent. Counts against the archive's inflate budget. */
  read(name: string): Uint8Array | undefined {
    const key = this.resolve(name);
    if (key === undefined) return undefined;
    const entry = this.entries.get(key)!;
    const data = this.rawData(entry);
    const budget = this.ctx.maxUncompressedBytes - this.inflated;
    let out: Uint8Array;
    if (entry.method === 0) {
      if (data.length !== entry.uncompressedSize) throw corrupt(this.label, `entry ${entry.name} has inconsistent sizes`);
      if (data.length > budget) throw tooLarge(this.label, this.ctx, 'its contents inflate past the limit');
      out = data;
    } else if (entry.method === 8) {
      out = this.inflate(entry, data, budget);
    } else if (entry.method === 99) {
      throw new ConversionError('encrypted', `This ${this.label} is encrypted (AES zip encryption); remove the password and upload it again.`);
    } else {
      throw new ConversionError('unsupported', `This ${this.label} uses a compression method (${entry.method}) that is not supported; re-save it with standard (deflate) compression.`);
    }
    this.inflated += out.length;
    return out;
  }

  /** An entry decoded as text (UTF-8, or UTF-16 when it starts with a UTF-16 byte-order mark). */
  readText(name: string): string | undefined {
    const data = this.read(name);
    return data === undefined ? undefined : decodeXmlBytes(data);
  }

  private rawData(entry: ZipEntry): Uint8Array {
    const at = entry.localHeaderOffset;
    if (at + 30 > this.bytes.length || u32(this.bytes, at) !== SIG_LOCAL) {
      throw corrupt(this.label, `entry ${entry.name} has no valid local header`);
    }
    const start = at + 30 + u16(this.bytes, at + 26) + u16(this.bytes, at + 28);
    const end = start + entry.compressedSize;
    if (end > this.bytes.length) throw corrupt(this.label, `entry ${entry.name} is truncated`);
    return this.bytes.subarray(start, end);
  }

  private inflate(entry: ZipEntry, data: Uint8Array, budget: number): Uint8Array {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let overDeclared = false;
    let overBudget = false;
    let done = false;
    const inflater = new Inflate((chunk, final) => {
      if (overDeclared || overBudget) return;
      total += chunk.length;
      if (total > entry.uncompressedSize) overDeclared = true;
      else if (total > budget) overBudget = true;
      else chunks.push(chunk);
      if (final) done = true;
    });
    try {
      for (let offset = 0; offset < data.length || (offset === 0 && data.length === 0); offset += INFLATE_SLICE) {
        const last = offset + INFLATE_SLICE >= data.length;
        inflater.push(data.subarray(offset, Math.min(offset + INFLATE_SLICE, data.length)), last);
        if (overDeclared || overBudget) break;
        if ((offset / INFLATE_SLICE) % 64 === 63) this.ctx.check();
        if (last) break;
      }
    } catch (err) {
      if (err instanceof ConversionError) throw err;
      throw corrupt(this.label, `entry ${entry.name} cannot be decompressed`);
    }
    if (overBudget) throw tooLarge(this.label, this.ctx, 'its contents inflate past the limit');
    if (overDeclared) {
      throw new ConversionError('too-large', `This ${this.label} was refused: entry ${entry.name} inflates to more than its declared size (a tampered archive or zip bomb).`);
    }
    if (!done && data.length > 0) throw corrupt(this.label, `entry ${entry.name} is truncated`);
    if (total !== entry.uncompressedSize) throw corrupt(this.label, `entry ${entry.name} is shorter than declared`);
    checkRatio(entry, total, this.ctx, this.label);
    return concat(chunks, total);
  }
}

function readCentralDirectory(bytes: Uint8Array, label: string): Map<string, ZipEntry> {
  const eocd = findEocd(bytes);
  if (eocd < 0) throw corrupt(label, 'the archive directory is missing (the file is truncated or not a zip archive)');
  let count = u16(bytes, eocd + 10);
  let size = u32(bytes, eocd + 12);
  let offset = u32(bytes, eocd + 16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    const locator = eocd - 20;
    if (locator >= 0 && u32(bytes, locator) === SIG_ZIP64_LOCATOR) {
      const record = u64(bytes, locator + 8);
      if (record + 56 <= bytes.length && u32(bytes, record) === SIG_ZIP64_EOCD) {
        count = u64(bytes, record + 32);
        size = u64(bytes, record + 40);
        offset = u64(bytes, record + 48);
      }
    }
  }
  if (count > MAX_ENTRIES) throw new ConversionError('too-large', `This ${label} holds ${count} files, more than the ${MAX_ENTRIES} allowed.`);
  if (offset + size > bytes.length) throw corrupt(label, 'the archive directory points outside the file');
  const decoder = new TextDecoder('utf-8');
  const entries = new Map<string, ZipEntry>();
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || u32(bytes, at) !== SIG_CENTRAL) throw corrupt(label, 'the archive directory is damaged');
    const flags = u16(bytes, at + 8);
    const method = u16(bytes, at + 10);
    let compressedSize = u32(bytes, at + 20);
    let uncompressedSize = u32(bytes, at + 24);
    const nameLength = u16(bytes, at + 28);
    const extraLength = u16(bytes, at + 30);
    const commentLength = u16(bytes, at + 32);
    let localHeaderOffset = u32(bytes, at + 42);
    const nameEnd = at + 46 + nameLength;
    if (nameEnd + extraLength + commentLength > bytes.length) throw corrupt(label, 'the archive directory is damaged');
    const name = decoder.decode(bytes.subarray(at + 46, nameEnd));
    if (uncompressedSize === 0xffffffff || compressedSize === 0xffffffff || localHeaderOffset === 0xffffffff) {
      // ZIP64 extended information: the 64-bit values follow in this order, each only when needed.
      let extra = nameEnd;
      const extraEnd = nameEnd + extraLength;
      while (extra + 4 <= extraEnd) {
        const id = u16(bytes, extra);
        const length = u16(bytes, extra + 2);
        if (id === 0x0001) {
          let field = extra + 4;
          if (uncompressedSize === 0xffffffff && field + 8 <= extra + 4 + length) {
            uncompressedSize = u64(bytes, field);
            field += 8;
          }
          if (compressedSize === 0xffffffff && field + 8 <= extra + 4 + length) {
            compressedSize = u64(bytes, field);
            field += 8;
          }
          if (localHeaderOffset === 0xffffffff && field + 8 <= extra + 4 + length) localHeaderOffset = u64(bytes, field);
          break;
        }
        extra += 4 + length;
      }
    }
    if (entries.has(name)) throw corrupt(label, `the archive lists ${name} twice`);
    if (!name.endsWith('/')) entries.set(name, { name, method, flags, compressedSize, uncompressedSize, localHeaderOffset });
    at = nameEnd + extraLength + commentLength;
  }
  return entries;
}

function findEocd(bytes: Uint8Array): number {
  const min = Math.max(0, bytes.length - 22 - 0xffff);
  for (let i = bytes.length - 22; i >= min; i--) {
    if (bytes[i] === 0x50 && bytes[i + 1] === 0x4b && u32(bytes, i) === SIG_EOCD) return i;
  }
  return -1;
}

function checkRatio(entry: ZipEntry, size: number, ctx: ConversionContext, label: string): void {
  if (size < RATIO_CHECK_MIN_BYTES) return;
  const ratio = size / Math.max(1, entry.compressedSize);
  if (ratio > ctx.maxCompressionRatio) {
    throw new ConversionError(
      'too-large',
      `This ${label} was refused: entry ${entry.name} expands ${Math.round(ratio)}-fold (${formatBytes(size)} from ${formatBytes(entry.compressedSize)}), past the ${ctx.maxCompressionRatio}:1 limit (zip bomb protection).`,
    );
  }
}

function tooLarge(label: string, ctx: ConversionContext, detail: string): ConversionError {
  return new ConversionError(
    'too-large',
    `This ${label} was refused: ${detail}, more than the ${formatBytes(ctx.maxUncompressedBytes)} limit (zip bomb protection).`,
  );
}

function corrupt(label: string, detail: string): ConversionError {
  return new ConversionError('corrupt', `This ${label} is damaged and cannot be read: ${detail}.`);
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Decodes an XML part: UTF-16 when it has a UTF-16 byte-order mark, otherwise UTF-8 (BOM dropped). */
export function decodeXmlBytes(data: Uint8Array): string {
  if (data.length >= 2 && data[0] === 0xff && data[1] === 0xfe) return new TextDecoder('utf-16le').decode(data.subarray(2));
  if (data.length >= 2 && data[0] === 0xfe && data[1] === 0xff) return new TextDecoder('utf-16be').decode(data.subarray(2));
  return new TextDecoder('utf-8').decode(data); // TextDecoder drops a UTF-8 BOM
}

function u16(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
}

function u32(b: Uint8Array, i: number): number {
  return ((b[i] ?? 0) | ((b[i + 1] ?? 0) << 8) | ((b[i + 2] ?? 0) << 16)) + (b[i + 3] ?? 0) * 0x1000000;
}

function u64(b: Uint8Array, i: number): number {
  const value = u32(b, i) + u32(b, i + 4) * 0x100000000;
  return Number.isSafeInteger(value) ? value : Number.MAX_SAFE_INTEGER;
}
