// Path patterns in SQL (goals, funnel steps) match in ClickHouse exactly the paths the path exclusions' glob
// matches, whatever LIKE's own special characters the pattern or path holds.

import { selectRows } from '../../../../lib/clickhouse/client';
import { globMatch } from '../../../../lib/ingest/accept/exclusions';
import { pathPatternLike } from '../../../../lib/stats/patterns';
import { createTestContext, type TestContext } from '../../../helpers/context';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const PATTERNS = [
  '/thank-you',
  '/docs/*',
  '/blog/*/comments',
  '*.pdf',
  '/a.b+(c)?[d]{1}|$^\\',
  '/100%_off*',
  '/x/*/y',
  '*',
];
const PATHS = [
  '/thank-you',
  '/thank-you/',
  '/docs/',
  '/docs/a/b',
  '/doc',
  '/blog/1/comments',
  '/blog/comments',
  '/files/a.pdf',
  '/files/apdf',
  '/a.b+(c)?[d]{1}|$^\\',
  '/aXb+(c)?[d]{1}|$^\\',
  '/100%_off',
  '/100%_offer',
  '/100X_off',
  '/100%Xoff',
  '/x/y',
  '/x//y',
  '/x/1/2/y',
  '',
];

it.each(PATTERNS)('%s matches in SQL the paths the exclusion glob matches, and only those', async (pattern) => {
  const rows = await selectRows<{ path: string; hit: number }>(
    ctx.clickhouse,
    'SELECT path, path LIKE {p:String} AS hit FROM (SELECT arrayJoin({paths:Array(String)}) AS path)',
    { p: pathPatternLike(pattern), paths: PATHS },
  );
  expect(rows.map((r) => [r.path, Number(r.hit) === 1])).toEqual(PATHS.map((p) => [p, globMatch(pattern, p)]));
});
