// External API read benchmark, embedded mode (issue target: with the Stats API benchmark's 10-million-event
// data, each read endpoint over range=30d answers in ≤ 150 ms p50 and ≤ 400 ms p99).
//
//   npx tsc -p tsconfig.json && node dist/bench/external.js [--events 10000000] [--runs 30] [--keep]
//
// Starts the whole service on fresh resources (bench/service.ts: the team is moved to enterprise and its
// limits lifted with `tidemark admin plan` / `tidemark admin limits --rpm unlimited --monthly unlimited`, so
// rate limits never interfere), fills one website with the generated events and browser data
// (bench/generate.ts: heatmap clicks, replay chunks, error events and error groups), then times each read
// endpoint over HTTP with the full_access key (x-api-key), one request at a time: 3 warm-ups, then --runs.
import { parseArgs } from 'node:util';
import { recordPresence } from '../lib/realtime/presence';
import { createRedis, waitReady } from '../lib/redis';
import { generateBrowserData, generateEvents, rawTailHours, rollUp, settleMerges } from './generate';
import { log, runBenchmark, type Service, startService, timeGet, timingHeader, timingRow } from './service';

const TARGET = { p50: 150, p99: 400 };

/** Realtime reads Redis presence, which ingestion keeps: `visitors` live visitors over the last 5 minutes. */
async function livePresence(service: Service, visitors: number): Promise<void> {
  const redis = createRedis(service.env.REDIS_URL!, 'request', 'bench');
  try {
    await waitReady(redis);
    const now = Date.now();
    const hits = Array.from({ length: visitors }, (_, i) => ({
      websiteId: service.website.id,
      visitorId: `live-${i}`,
      pathname: `/p/${i % 97}`,
      countryCode: ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP'][i % 7],
      ts: now - (i % 280) * 1000,
    }));
    for (let i = 0; i < hits.length; i += 500)
      await recordPresence(redis, service.env.REDIS_PREFIX!, hits.slice(i, i + 500), now);
    log(`${visitors.toLocaleString('en-US')} live visitors recorded`);
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const target = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 30);
  if (!(target > 0) || !(runs > 0)) throw new Error('--events and --runs must be positive numbers');
  const service = await startService({ name: 'extbench' });
  try {
    let started = Date.now();
    const gen = await generateEvents(service, target);
    log(`generated ${gen.events.toLocaleString('en-US')} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // The clock keeps closed days rolled up in a running deployment; do now what it would have done.
    const rolling = Date.now();
    log(`${await rollUp(service)} in ${((Date.now() - rolling) / 1000).toFixed(1)} s`);
    const settle = await settleMerges(service);
    log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
    started = Date.now();
    const browser = await generateBrowserData(service, gen);
    log(
      `generated ${browser.interactions.toLocaleString('en-US')} clicks, ${browser.replaySessions.toLocaleString('en-US')} replayed sessions ` +
        `(${browser.replayChunks.toLocaleString('en-US')} chunks), ${browser.errors.toLocaleString('en-US')} errors in ` +
        `${browser.errorGroups} groups in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    await livePresence(service, 5_000);
    const id = service.website.id;
    const v1 = '/api/external/v1';
    const cases: [string, string][] = [
      ['GET /usage', `${v1}/usage`],
      ['GET /websites', `${v1}/websites`],
      ['GET /websites/{id}', `${v1}/websites/${id}`],
      ['GET /analytics/{id}', `${v1}/analytics/${id}?range=30d`],
      ['GET /analytics/{id}/visitors', `${v1}/analytics/${id}/visitors?range=30d`],
      ['GET /analytics/{id}/pages', `${v1}/analytics/${id}/pages?range=30d`],
      ['GET /analytics/{id}/countries', `${v1}/analytics/${id}/countries?range=30d`],
      ['GET /analytics/{id}/technology', `${v1}/analytics/${id}/technology?range=30d`],
      ['GET /heatmaps/{id}/pages', `${v1}/heatmaps/${id}/pages`],
      ['GET /replays/{id}/sessions', `${v1}/replays/${id}/sessions`],
      ['GET /errors/{id}/groups', `${v1}/errors/${id}/groups`],
      ['GET /track/realtime/{id}', `${v1}/track/realtime/${id}`],
    ];
    const lines = [
      `Tidemark External API read benchmark — embedded store, ${gen.events.toLocaleString('en-US')} events over 90 days ` +
        `(+ ${browser.interactions.toLocaleString('en-US')} clicks, ${browser.replaySessions.toLocaleString('en-US')} replays, ` +
        `${browser.errors.toLocaleString('en-US')} errors in ${browser.errorGroups} groups), range=30d, ${runs} sequential runs each`,
      `(${new Date().toISOString()}: the last ${await rawTailHours(service)} hours of the range are read raw, the rest from rollups)`,
      '',
      timingHeader(32),
    ];
    const failures: string[] = [];
    for (const [name, path] of cases) {
      const r = await timeGet(service, path, runs);
      lines.push(timingRow(name, 32, r, TARGET));
      log(lines[lines.length - 1]);
      if (r.failure) failures.push(`${name} (${path}): ${r.failure}`);
    }
    if (failures.length) lines.push('', 'Non-200 replies:', ...failures.map((f) => `  ${f}`));
    process.stdout.write(`${lines.join('\n')}\n`);
    return failures.length ? 1 : 0;
  } finally {
    await service.stop(values.keep === true);
  }
}

runBenchmark(main);
