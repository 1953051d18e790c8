// A streaming ZIP writer: entries are deflated as their data arrives and yielded as bytes, each followed by
// a data descriptor (its CRC-32 and sizes are known only at its end), then the central directory. Nothing but
// the directory's few bytes per entry is kept, so an archive of any number of rows streams in constant memory.
// No ZIP64: an entry or archive past 4 GiB, or more than 65,535 entries, is refused.
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';

export interface ZipEntry {
  /** The path inside the archive (UTF-8). */
  name: string;
  data: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;
}

const LIMIT = 0xffffffff;
const VERSION = 20; // 2.0: deflate, data descriptors
const FLAGS = 0x0008 | 0x0800; // sizes in a data descriptor; UTF-8 names
const DEFLATE = 8;

// zlib.crc32 arrived in Node 20.15; the engines range starts at 20.12.
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
export function crc32Fallback(data: Uint8Array, value = 0): number {
  let c = ~value;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
const crc32: (data: Uint8Array, value?: number) => number =
  typeof zlib.crc32 === 'function' ? zlib.crc32 : crc32Fallback;

/** MS-DOS date and time fields (local time, 2-second steps) of an instant. */
function dosDateTime(at: Date): { date: number; time: number } {
  const year = Math.min(Math.max(at.getFullYear(), 1980), 2107);
  return {
    date: ((year - 1980) << 9) | ((at.getMonth() + 1) << 5) | at.getDate(),
    time: (at.getHours() << 11) | (at.getMinutes() << 5) | Math.floor(at.getSeconds() / 2),
  };
}

interface Written {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** The archive's bytes: entries in order as `entries` yields them, `modified` their timestamp. */
export async function* zipStream(
  entries: Iterable<ZipEntry> | AsyncIterable<ZipEntry>,
  modified = new Date(),
): AsyncGenerator<Buffer> {
  const { date, time } = dosDateTime(modified);
  const written: Written[] = [];
  let offset = 0;
  const checkOffset = () => {
    if (offset > LIMIT) throw new Error('ZIP archive larger than 4 GiB (ZIP64 is not supported)');
  };
  for await (const entry of entries) {
    if (written.length === 0xffff) throw new Error('ZIP archive with more than 65,535 entries');
    const name = Buffer.from(entry.name, 'utf8');
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(VERSION, 4);
    header.writeUInt16LE(FLAGS, 6);
    header.writeUInt16LE(DEFLATE, 8);
    header.writeUInt16LE(time, 10);
    header.writeUInt16LE(date, 12);
    // CRC-32 and sizes (14–25) stay zero: the data descriptor carries them.
    header.writeUInt16LE(name.length, 26);
    const w: Written = { name, crc: 0, compressed: 0, size: 0, offset };
    yield Buffer.concat([header, name]);
    offset += header.length + name.length;

    async function* counted(): AsyncGenerator<Uint8Array> {
      for await (const piece of entry.data) {
        const bytes = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
        w.crc = crc32(bytes, w.crc);
        w.size += bytes.length;
        if (w.size > LIMIT) throw new Error(`ZIP entry ${entry.name} larger than 4 GiB`);
        yield bytes;
      }
    }
    // pipeline destroys both streams when either fails or the reader stops early.
    const deflated = pipeline(Readable.from(counted()), zlib.createDeflateRaw(), () => undefined);
    for await (const chunk of deflated as AsyncIterable<Buffer>) {
      w.compressed += chunk.length;
      yield chunk;
    }
    offset += w.compressed;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(w.crc, 4);
    descriptor.writeUInt32LE(w.compressed, 8);
    descriptor.writeUInt32LE(w.size, 12);
    yield descriptor;
    offset += descriptor.length;
    checkOffset();
    written.push(w);
  }

  const directoryStart = offset;
  for (const w of written) {
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(VERSION, 4); // made by: MS-DOS attributes, version 2.0
    record.writeUInt16LE(VERSION, 6);
    record.writeUInt16LE(FLAGS, 8);
    record.writeUInt16LE(DEFLATE, 10);
    record.writeUInt16LE(time, 12);
    record.writeUInt16LE(date, 14);
    record.writeUInt32LE(w.crc, 16);
    record.writeUInt32LE(w.compressed, 20);
    record.writeUInt32LE(w.size, 24);
    record.writeUInt16LE(w.name.length, 28);
    // extra, comment, disk, attributes: zero
    record.writeUInt32LE(w.offset, 42);
    yield Buffer.concat([record, w.name]);
    offset += record.length + w.name.length;
  }
  checkOffset();
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(written.length, 8);
  end.writeUInt16LE(written.length, 10);
  end.writeUInt32LE(offset - directoryStart, 12);
  end.writeUInt32LE(directoryStart, 16);
  yield end;
}
