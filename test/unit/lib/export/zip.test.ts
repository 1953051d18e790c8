// The streaming ZIP writer, checked by the archive tools themselves: Info-ZIP's unzip and Python's zipfile
// test every entry's CRC-32 and sizes, and Python reads the contents back.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { crc32Fallback, type ZipEntry, zipStream } from '../../../../lib/export/zip';

async function collect(entries: ZipEntry[] | AsyncIterable<ZipEntry>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of zipStream(entries, new Date(2026, 2, 29, 12, 30, 10))) parts.push(part);
  return Buffer.concat(parts);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-zip-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function written(bytes: Buffer): string {
  const file = path.join(dir, `${randomBytes(4).toString('hex')}.zip`);
  fs.writeFileSync(file, bytes);
  return file;
}

const READ = `
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps([[i.filename, i.date_time, z.read(i.filename).decode('utf-8')] for i in z.infolist()]))
`;
const contents = (file: string) =>
  JSON.parse(execFileSync('python3', ['-c', READ, file], { encoding: 'utf8' })) as [string, number[], string][];

describe('zipStream', () => {
  it('writes an archive unzip and Python accept, with each entry as given', async () => {
    const big = Array.from({ length: 20_000 }, (_, i) => `/page/${i},${i}\r\n`).join('');
    async function* slowly(): AsyncGenerator<string> {
      for (let i = 0; i < big.length; i += 7000) yield big.slice(i, i + 7000);
    }
    const file = written(
      await collect([
        { name: 'visitors.csv', data: ['date,visitors\r\n', '2026-03-29,2\r\n'] },
        { name: 'empty.csv', data: [] },
        { name: 'pages.csv', data: slowly() },
        { name: 'länder.csv', data: [Buffer.from('country\r\nDE\r\n')] },
      ]),
    );
    expect(execFileSync('unzip', ['-t', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
    execFileSync('python3', ['-m', 'zipfile', '-t', file]); // throws on a bad CRC or size
    expect(contents(file)).toEqual([
      ['visitors.csv', [2026, 3, 29, 12, 30, 10], 'date,visitors\r\n2026-03-29,2\r\n'],
      ['empty.csv', [2026, 3, 29, 12, 30, 10], ''],
      ['pages.csv', [2026, 3, 29, 12, 30, 10], big],
      ['länder.csv', [2026, 3, 29, 12, 30, 10], 'country\r\nDE\r\n'],
    ]);
    // deflated: 20,000 similar lines take far less than their text
    expect(fs.statSync(file).size).toBeLessThan(big.length / 3);
  });

  it('computes CRC-32 without zlib.crc32 (Node before 20.15) as zlib does, piece by piece', () => {
    const data = randomBytes(5000);
    expect(crc32Fallback(data)).toBe(zlib.crc32(data));
    expect(crc32Fallback(data.subarray(1000), crc32Fallback(data.subarray(0, 1000)))).toBe(zlib.crc32(data));
    expect(crc32Fallback(Buffer.from('123456789'))).toBe(0xcbf43926); // the standard check value
  });

  it('writes an empty archive', async () => {
    const bytes = await collect([]);
    expect(bytes).toHaveLength(22);
    expect(contents(written(bytes))).toEqual([]);
  });

  it('takes entries from an async source, one at a time, as the reader asks', async () => {
    const made: string[] = [];
    async function* entries(): AsyncGenerator<ZipEntry> {
      for (const name of ['a.csv', 'b.csv', 'c.csv']) {
        made.push(name);
        yield { name, data: [`${name}\r\n`] };
      }
    }
    const archive = zipStream(entries());
    await archive.next(); // a.csv's header
    expect(made).toEqual(['a.csv']);
    // The reader stops: the source is closed and makes nothing more.
    await archive.return(undefined);
    expect(made).toEqual(['a.csv']);
  });

  it('fails when an entry’s data fails', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield 'x';
      throw new Error('store went away');
    }
    await expect(collect([{ name: 'x.csv', data: failing() }])).rejects.toThrow('store went away');
  });
});
