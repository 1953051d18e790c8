// In-process micro-benchmark of the web role's CPU per event on POST /api/v1/events, without HTTP, Redis or
// PostgreSQL: the load generator's own batches (bench/ingest-load.ts) are parsed as body-parser would, checked
// against the batch schema and run through ingestServerBatch with in-memory dependencies, and the job is
// data serialised as BullMQ serialises it (JSON.stringify), the payload kept as bytes. The end-to-end benchmark is CPU-bound and noisy
// on a shared machine; this one isolates the code under change, so before/after ratios are trustworthy.
//
//   node dist/bench/ingest-pipeline.js [--batches 400] [--rounds 5] [--batch 1000]
//
// Prints CPU µs per event for each round and the median, plus the size of the serialised job.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { openEnrichers } from '../lib/ingest/accept/enrichers';
import { ingestServerBatch } from '../lib/ingest/accept/pipeline';
import { ingestBatchSchema } from '../lib/ingest/accept/serverSchemas';
import type { QueuedIngest } from '../lib/ingest/job/rows';
import { buildTemplates, renderBody } from './ingest-load';
import { standInDeps, standInPrincipal } from './pipeline-standins';

const TRACKING_CODE = 'bench-micro';
const WEBSITE = { id: randomUUID(), team_id: randomUUID(), domain: 'shop.example.com', tracking_code: TRACKING_CODE };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      batches: { type: 'string', default: '400' },
      rounds: { type: 'string', default: '5' },
      batch: { type: 'string', default: '1000' },
    },
  });
  const batches = Number(values.batches);
  const rounds = Number(values.rounds);
  const batchSize = Number(values.batch);

  const enrichers = await openEnrichers({});
  let jobBytes = 0;
  let jobs = 0;
  const deps = standInDeps(WEBSITE, enrichers, async (_id: string, job: QueuedIngest) => {
    // What BullMQ's Job.asJSON does with the data before it goes to Redis; the payload goes as it is.
    jobBytes += JSON.stringify(job.data).length + job.payload.length;
    jobs++;
  });
  const principal = standInPrincipal(WEBSITE);

  const templates = buildTemplates(96, batchSize, TRACKING_CODE);
  const results: number[] = [];
  let accepted = 0;
  for (let round = 0; round <= rounds; round++) {
    // Bodies are rendered outside the timed part, as the load generator does in its own process.
    const bodies = Array.from({ length: batches }, (_, i) =>
      renderBody(templates[i % templates.length], Date.now(), undefined),
    );
    const before = process.cpuUsage();
    for (const body of bodies) {
      const batch = ingestBatchSchema.parse(JSON.parse(body));
      const result = await ingestServerBatch(deps, { principal, batch, gpc: false });
      accepted += result.acceptedCount;
    }
    const used = process.cpuUsage(before);
    const perEvent = (used.user + used.system) / (batches * batchSize);
    // Round 0 warms the JIT and is not counted.
    if (round > 0) results.push(perEvent);
    process.stdout.write(`round ${round}${round === 0 ? ' (warm-up)' : ''}: ${perEvent.toFixed(2)} µs CPU per event\n`);
  }
  results.sort((a, b) => a - b);
  process.stdout.write(
    `median ${results[Math.floor(results.length / 2)].toFixed(2)} µs per event; accepted ${accepted}; ` +
      `job ${Math.round(jobBytes / jobs)} B (data JSON + payload) per ${batchSize}-event job\n`,
  );
  enrichers.geo.close();
}

main().catch((err: Error) => {
  process.stderr.write(`ingest-pipeline failed: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
