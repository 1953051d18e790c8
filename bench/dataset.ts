// Keeps a generated dataset served for investigation: starts the service, fills it like bench/external.ts,
// writes how to reach it to a JSON file and stays up until SIGINT/SIGTERM (then removes everything).
//
//   npx tsc -p tsconfig.json && node dist/bench/dataset.js [--events 10000000] [--out /tmp/tidemark-dataset.json]
//
// Restarting the service's web role (kill its pid; the supervisor restarts it) picks up a rebuilt dist/.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { generateBrowserData, generateEvents, rollUp } from './generate';
import { log, startService } from './service';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { events: { type: 'string' }, out: { type: 'string' } } });
  const out = values.out ?? '/tmp/tidemark-dataset.json';
  const service = await startService({ name: 'dataset' });
  const gen = await generateEvents(service, Number(values.events ?? 10_000_000));
  await generateBrowserData(service, gen);
  log(await rollUp(service));
  fs.writeFileSync(
    out,
    JSON.stringify({ base: service.base, key: service.key, website: service.website, env: service.env }, null, 2),
  );
  log(`dataset ready: ${out}`);
  const stop = () => service.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: Error) => {
  process.stderr.write(`dataset failed: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
