// A store-only ZIP writer that streams (docs/decisions/0111-listing-packs-and-streamed-zips.md).
// Each entry's bytes pass through once: its CRC-32 and size are computed on
// the way and written after it in a data descriptor (general purpose bit 3),
// so nothing is held but the chunk in flight and the central directory (a few
// dozen bytes per entry). Sizes or offsets past 4 GiB switch to ZIP64 records.
// Pulled by the consumer (a Response body): a slow phone slows the reading of
// R2 too, and `peakBuffered` says the most this writer ever held at once.

import { crc32 as zlibCrc32 } from "node:zlib";

export interface ZipEntry {
  /** The file's name in the archive ("/" separated, UTF-8). */
  name: string;
  /** Its bytes: produced only when the writer reaches this entry. */
  open: () => Promise<ReadableStream<Uint8Array> | Uint8Array>;
  /** Modification time (ms), for the DOS date fields. */
  modifiedAt: number;
}

/**
 * The running CRC-32 of an entry's bytes, by the runtime's zlib (native in workerd under nodejs_compat): a JavaScript
 * table loop spent a large pack's CPU budget on checksums alone (the figures: docs/decisions/0306).
 */
export function crc32Update(crc: number, bytes: Uint8Array): number {
  return zlibCrc32(bytes, crc) >>> 0;
}

const MAX32 = 0xffffffff;
const utf8 = new TextEncoder();

function dosDateTime(ms: number): { time: number; date: number } {
  const d = new Date(ms);
  const year = Math.max(1980, d.getUTCFullYear());
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

class Bytes {
  readonly buf: Uint8Array;
  readonly view: DataView;
  at = 0;
  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }
  u16(v: number) {
    this.view.setUint16(this.at, v, true);
    this.at += 2;
    return this;
  }
  u32(v: number) {
    this.view.setUint32(this.at, v >>> 0, true);
    this.at += 4;
    return this;
  }
  u64(v: number) {
    this.view.setBigUint64(this.at, BigInt(v), true);
    this.at += 8;
    return this;
  }
  bytes(b: Uint8Array) {
    this.buf.set(b, this.at);
    this.at += b.length;
    return this;
  }
}

interface Written {
  name: Uint8Array;
  crc: number;
  size: number;
  offset: number;
  time: number;
  date: number;
}

const FLAGS = 0x0008 | 0x0800; // data descriptor follows; names are UTF-8

function localHeader(name: Uint8Array, time: number, date: number): Uint8Array {
  // Sizes unknown yet (bit 3); version 4.5 so readers expect a ZIP64 descriptor if one comes.
  return new Bytes(30 + name.length)
    .u32(0x04034b50)
    .u16(45)
    .u16(FLAGS)
    .u16(0)
    .u16(time)
    .u16(date)
    .u32(0)
    .u32(0)
    .u32(0)
    .u16(name.length)
    .u16(0)
    .bytes(name).buf;
}

function dataDescriptor(crc: number, size: number): Uint8Array {
  if (size >= MAX32) return new Bytes(24).u32(0x08074b50).u32(crc).u64(size).u64(size).buf;
  return new Bytes(16).u32(0x08074b50).u32(crc).u32(size).u32(size).buf;
}

function centralDirectory(entries: Written[], start: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const big = e.size >= MAX32 || e.offset >= MAX32;
    const extra = big ? new Bytes(28).u16(0x0001).u16(24).u64(e.size).u64(e.size).u64(e.offset).buf : new Uint8Array(0);
    parts.push(
      new Bytes(46 + e.name.length + extra.length)
        .u32(0x02014b50)
        .u16(45)
        .u16(45)
        .u16(FLAGS)
        .u16(0)
        .u16(e.time)
        .u16(e.date)
        .u32(e.crc)
        .u32(big ? MAX32 : e.size)
        .u32(big ? MAX32 : e.size)
        .u16(e.name.length)
        .u16(extra.length)
        .u16(0)
        .u16(0)
        .u16(0)
        .u32(0)
        .u32(big ? MAX32 : e.offset)
        .bytes(e.name)
        .bytes(extra).buf,
    );
  }
  const cdSize = parts.reduce((n, p) => n + p.length, 0);
  const cdEnd = start + cdSize;
  const zip64 = start >= MAX32 || entries.length >= 0xffff || cdEnd >= MAX32;
  if (zip64) {
    parts.push(
      new Bytes(56)
        .u32(0x06064b50)
        .u64(44)
        .u16(45)
        .u16(45)
        .u32(0)
        .u32(0)
        .u64(entries.length)
        .u64(entries.length)
        .u64(cdSize)
        .u64(start).buf,
      new Bytes(20).u32(0x07064b50).u32(0).u64(cdEnd).u32(1).buf,
    );
  }
  parts.push(
    new Bytes(22)
      .u32(0x06054b50)
      .u16(0)
      .u16(0)
      .u16(zip64 ? 0xffff : entries.length)
      .u16(zip64 ? 0xffff : entries.length)
      .u32(zip64 ? MAX32 : cdSize)
      .u32(zip64 ? MAX32 : start)
      .u16(0).buf,
  );
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface ZipStream {
  stream: ReadableStream<Uint8Array>;
  /** The most bytes this writer held at one time (the chunk in flight plus the central directory so far). */
  peakBuffered(): number;
  /** Bytes written so far. */
  written(): number;
}

/** A ZIP of `entries` (an iterable, so entries can be made as they are reached). */
export function zipStream(entries: AsyncIterable<ZipEntry> | Iterable<ZipEntry>): ZipStream {
  const done: Written[] = [];
  let offset = 0;
  let peak = 0;
  let directoryBytes = 0;
  const iterator =
    Symbol.asyncIterator in entries
      ? (entries as AsyncIterable<ZipEntry>)[Symbol.asyncIterator]()
      : (entries as Iterable<ZipEntry>)[Symbol.iterator]();
  let current: {
    entry: Written;
    reader: ReadableStreamDefaultReader<Uint8Array> | null;
    whole: Uint8Array | null;
  } | null = null;
  let finished = false;

  const hold = (n: number) => {
    peak = Math.max(peak, n + directoryBytes);
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let emitted = false;
        const emit = (b: Uint8Array) => {
          hold(b.byteLength);
          offset += b.byteLength;
          controller.enqueue(b);
          emitted = true;
        };
        // A pull must enqueue something, or the stream never asks again.
        while (!emitted && !finished) {
          if (!current) {
            const next = await iterator.next();
            if (next.done) {
              const cd = centralDirectory(done, offset);
              emit(cd);
              finished = true;
              controller.close();
              return;
            }
            const e = next.value;
            const name = utf8.encode(e.name);
            const { time, date } = dosDateTime(e.modifiedAt);
            const entry: Written = { name, crc: 0, size: 0, offset, time, date };
            emit(localHeader(name, time, date));
            const body = await e.open();
            current =
              body instanceof Uint8Array
                ? { entry, reader: null, whole: body }
                : { entry, reader: body.getReader(), whole: null };
            continue;
          }
          let chunk: Uint8Array | undefined;
          if (current.whole) {
            chunk = current.whole;
            current.whole = null;
          } else if (current.reader) {
            const r = await current.reader.read();
            chunk = r.done ? undefined : r.value;
          }
          if (chunk && chunk.byteLength > 0) {
            current.entry.crc = crc32Update(current.entry.crc, chunk);
            current.entry.size += chunk.byteLength;
            emit(chunk);
            continue;
          }
          if (chunk) continue;
          const { entry } = current;
          emit(dataDescriptor(entry.crc, entry.size));
          done.push(entry);
          directoryBytes += 46 + entry.name.length + 28;
          current = null;
        }
      },
      async cancel(reason) {
        await current?.reader?.cancel(reason).catch(() => undefined);
        if ("return" in iterator && typeof iterator.return === "function") await iterator.return();
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, peakBuffered: () => peak, written: () => offset };
}
