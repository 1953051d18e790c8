import { csvChunks, csvField, csvRecord, safeFileName } from '../../../../lib/export/csv';
import { parseCsv } from '../../../helpers/csv';

describe('csvField', () => {
  it('writes numbers as they are and empty values empty', () => {
    expect(csvField(12)).toBe('12');
    expect(csvField(33.5)).toBe('33.5');
    expect(csvField(-4)).toBe('-4'); // a number is never a formula: no guard
    expect(csvField(0)).toBe('0');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField(Number.NaN)).toBe('');
  });

  it('quotes fields with a comma, a quote or a line break, doubling quotes (RFC 4180)', () => {
    expect(csvField('/plain')).toBe('/plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField('')).toBe('');
  });

  it('prefixes text a spreadsheet would run as a formula with an apostrophe', () => {
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('+33 6')).toBe("'+33 6");
    expect(csvField('-x')).toBe("'-x");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tx')).toBe("'\tx");
    expect(csvField('\rx')).toBe('"\'\rx"');
    // guarded, then quoted: the apostrophe is inside the quotes
    expect(csvField('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(csvField('a=b')).toBe('a=b');
  });
});

describe('csvChunks', () => {
  it('writes a header and one CRLF record per row, and reads back as written', () => {
    const rows = [
      { page: '/a,b', visitors: 2 },
      { page: 'x "y"', visitors: 1 },
    ];
    const text = [...csvChunks(['page', 'visitors'], rows)].join('');
    expect(text).toBe('page,visitors\r\n"/a,b",2\r\n"x ""y""",1\r\n');
    expect(parseCsv(text)).toEqual([
      ['page', 'visitors'],
      ['/a,b', '2'],
      ['x "y"', '1'],
    ]);
    expect(csvRecord(['a', 1, null])).toBe('a,1,\r\n');
  });

  it('yields pieces of about the asked size that join to the whole', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ k: `/page/${i}`, n: i }));
    const pieces = [...csvChunks(['k', 'n'], rows, 1000)];
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.slice(0, -1).every((p) => p.length >= 1000 && p.length < 1100)).toBe(true);
    const records = parseCsv(pieces.join(''));
    expect(records).toHaveLength(1001);
    expect(records[1000]).toEqual(['/page/999', '999']);
  });

  it('writes the header alone for no rows', () => {
    expect([...csvChunks(['date', 'visitors'], [])]).toEqual(['date,visitors\r\n']);
  });
});

describe('safeFileName', () => {
  it('keeps letters, digits, dot, dash and underscore', () => {
    expect(safeFileName('shop.example.com-breakdown-page-2026-03-01.csv')).toBe(
      'shop.example.com-breakdown-page-2026-03-01.csv',
    );
    expect(safeFileName('a"b\r\nc/d é.csv')).toBe('a_b_c_d_.csv');
  });
});
