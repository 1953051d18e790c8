// `tidemark admin rates set|list`: dated exchange rates for lifetime value.
import { main } from '../../../cli/main';
import { captureIo, cliEnv } from '../../helpers/cli';
import { createTestContext, type TestContext } from '../../helpers/context';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

async function run(...argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io, cliEnv(ctx));
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

describe('tidemark admin rates', () => {
  it('sets dated rates, replaces a date’s rate, and lists them by currency and date', async () => {
    expect(await run('admin', 'rates', 'set', 'eur', '1.08', '--date', '2026-01-01')).toMatchObject({
      code: 0,
      out: '1 EUR = 1.08 USD from 2026-01-01',
    });
    expect((await run('admin', 'rates', 'set', 'EUR', '1.2', '--date', '2026-03-01')).code).toBe(0);
    expect((await run('admin', 'rates', 'set', 'GBP', '1.27', '--date', '2026-02-01')).code).toBe(0);
    // The same date again replaces its rate.
    expect((await run('admin', 'rates', 'set', 'EUR', '1.1', '--date', '2026-01-01')).code).toBe(0);
    const listed = await run('admin', 'rates', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      { currency: 'EUR', effective_date: '2026-01-01', usd_per_unit: 1.1 },
      { currency: 'EUR', effective_date: '2026-03-01', usd_per_unit: 1.2 },
      { currency: 'GBP', effective_date: '2026-02-01', usd_per_unit: 1.27 },
    ]);
    const gbp = await run('admin', 'rates', 'list', 'GBP');
    expect(gbp.out.split('\n')).toEqual(['currency  effective_date  usd_per_unit', 'GBP       2026-02-01      1.27']);
  });

  it('without --date the rate applies from today (UTC)', async () => {
    expect((await run('admin', 'rates', 'set', 'JPY', '0.0067')).out).toBe(
      `1 JPY = 0.0067 USD from ${new Date().toISOString().slice(0, 10)}`,
    );
  });

  it('refuses bad input with a usage error (exit 2) and stores nothing', async () => {
    const cases = [
      ['admin', 'rates', 'set', 'EURO', '1.08'],
      ['admin', 'rates', 'set', 'USD', '1'],
      ['admin', 'rates', 'set', 'CHF', '0'],
      ['admin', 'rates', 'set', 'CHF', '-1'],
      ['admin', 'rates', 'set', 'CHF', 'abc'],
      ['admin', 'rates', 'set', 'CHF', '1.1', '--date', '2026-02-30'],
      ['admin', 'rates', 'set', 'CHF'],
      ['admin', 'rates', 'set', 'CHF', '1.1', 'extra'],
    ];
    for (const argv of cases) {
      const r = await run(...argv);
      expect([argv.join(' '), r.code]).toEqual([argv.join(' '), 2]);
      expect(r.err).toMatch(/tidemark admin rates set: /);
    }
    expect((await run('admin', 'rates', 'list', 'CHF')).out).toBe('(none)');
  });
});
