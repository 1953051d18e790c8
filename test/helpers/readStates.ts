// The three states a website's days can be read in — raw events, daily rollups, a merged window over them —
// as a describe.each table: each entry rolls `rolled` up (or checks nothing is) and checks the planner sees it.
import { computeRollups } from '../../jobs/rollups/compute';
import { computeWindow } from '../../jobs/rollups/windows';
import type { ClickHouseClient } from '../../lib/clickhouse/client';
import { rollupCoverage, windowRun } from '../../lib/stats/coverage';
import { rollupPlan } from '../../lib/stats/run';
import { parseDate } from '../../lib/stats/time';

export function readStates(
  clickhouse: () => ClickHouseClient,
  site: { id: string; timeZone: string; rolled: [string, string]; range: { start: number; end: number } },
): [string, () => Promise<void>][] {
  const { id, timeZone: tz, rolled, range } = site;
  return [
    ['raw events', async () => expect(await rollupCoverage(clickhouse(), id, tz)).toBeUndefined()],
    [
      'daily rollups',
      async () => {
        await computeRollups(clickhouse(), id, tz, parseDate(rolled[0])!, parseDate(rolled[1])!, { final: true });
        expect(await rollupPlan(clickhouse(), id, tz, range.start, range.end)).toMatchObject({
          firstDay: rolled[0],
          lastDay: rolled[1],
        });
      },
    ],
    [
      'merged windows',
      async () => {
        const coverage = (await rollupCoverage(clickhouse(), id, tz))!;
        await computeWindow(clickhouse(), id, tz, parseDate(rolled[0])!, parseDate(rolled[1])!, coverage);
        expect(await windowRun(clickhouse(), id, tz, rolled[0], rolled[1], 0)).toMatch(/^[1-9]\d*$/);
      },
    ],
  ];
}
