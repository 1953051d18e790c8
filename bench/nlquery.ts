// Natural-language query benchmark (issue 27): POST /api/external/v1/query/{id} end to end over HTTP.
//   - interpreter path (no OPENAI_API_KEY): target p50 ≤ 150 ms on the 10-million-event site (plan + query);
//   - LLM path against a loopback chat-completions server that answers at once: the overhead over the model's
//     own time (the LLM path's p50 less the interpreter's, same question, same data) target ≤ 50 ms p50.
//
//   npx tsc -p tsconfig.json && node dist/bench/nlquery.js [--events 10000000] [--runs 30] [--keep]
//
// Two services on fresh resources (bench/service.ts), each filled with the same generated events (90 days,
// rolled up as the clock would); the second runs with OPENAI_BASE_URL pointing at the loopback server, whose
// plan is the interpreter's own for the question (so both paths run the same query). Each question carries a
// run number, so no answer comes from the LLM path's cache; one request at a time, 3 warm-ups, then --runs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { interpret } from '../lib/nlquery/interpret';
import { generateEvents, rollUp, settleMerges } from './generate';
import { percentile } from './ingest-load';
import { log, runBenchmark, type Service, startService } from './service';

const QUESTIONS = [
  'How many visitors in the last 30 days?',
  'Visitors in the last 30 days compared to the previous period',
  'Top pages in the last 30 days',
  'Visitors from Germany in the last 30 days',
  'Visitors per day in the last 30 days',
];
const TARGET_INTERPRETER_P50 = 150;
const TARGET_OVERHEAD_P50 = 50;

/** A chat-completions server that answers at once: the interpreter's plan as the tool call, "ok" as a summary. */
async function instantModel(): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      calls++;
      const body = JSON.parse(raw) as { tools?: unknown; messages: { role: string; content: string }[] };
      const question = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const plan = interpret(question, { goals: [], events: [] })?.plan;
      const message = body.tools
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'c',
                type: 'function',
                function: { name: 'answer_with_query_plan', arguments: JSON.stringify(plan) },
              },
            ],
          }
        : { role: 'assistant', content: 'ok' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model: 'bench',
          choices: [{ index: 0, finish_reason: 'stop', message }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function filled(service: Service, events: number): Promise<void> {
  const gen = await generateEvents(service, events);
  log(`generated ${gen.events.toLocaleString('en-US')} events`);
  log(await rollUp(service));
  const settle = await settleMerges(service);
  log(`background merges ${settle.settled ? 'settled' : 'still running'} after ${settle.seconds} s`);
}

/** p50 and p99 (ms) of asking a question `runs` times, each with its own run number. */
async function timeQuestion(service: Service, question: string, runs: number): Promise<{ p50: number; p99: number }> {
  let n = 0;
  const once = async () => {
    const t = process.hrtime.bigint();
    const res = await fetch(`${service.base}/api/external/v1/query/${service.website.id}`, {
      method: 'POST',
      headers: { 'x-api-key': service.key, 'content-type': 'application/json' },
      body: JSON.stringify({ question: `${question} (run ${++n})` }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${question}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  for (let i = 0; i < 3; i++) await once();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) ms.push(await once());
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { events: { type: 'string' }, runs: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const events = Number(values.events ?? 10_000_000);
  const runs = Number(values.runs ?? 30);
  if (!(events > 0) || !(runs > 0)) throw new Error('--events and --runs must be positive numbers');
  const model = await instantModel();
  const interpreter: Record<string, { p50: number; p99: number }> = {};
  const llm: Record<string, { p50: number; p99: number }> = {};
  let service = await startService({ name: 'nlqbench' });
  try {
    await filled(service, events);
    for (const q of QUESTIONS) interpreter[q] = await timeQuestion(service, q, runs);
  } finally {
    await service.stop(values.keep === true);
  }
  service = await startService({
    name: 'nlqbenchllm',
    extraEnv: { OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: model.url, OPENAI_MODEL: 'bench' },
  });
  try {
    await filled(service, events);
    for (const q of QUESTIONS) llm[q] = await timeQuestion(service, q, runs);
  } finally {
    await service.stop(values.keep === true);
    await model.close();
  }
  const lines = [
    `Tidemark natural-language query benchmark — embedded store, ${events.toLocaleString('en-US')} events over 90 days, ${runs} sequential runs each`,
    `(the model: a loopback server answering at once, ${model.calls()} calls)`,
    '',
    `${'question'.padEnd(62)} │ interpreter p50 / p99 │ LLM path p50 / p99 │ overhead p50 │ result`,
  ];
  let failed = false;
  for (const q of QUESTIONS) {
    const i = interpreter[q];
    const l = llm[q];
    const overhead = l.p50 - i.p50;
    const pass = i.p50 <= TARGET_INTERPRETER_P50 && overhead <= TARGET_OVERHEAD_P50;
    failed ||= !pass;
    lines.push(
      `${q.padEnd(62)} │ ${`${i.p50.toFixed(0)} / ${i.p99.toFixed(0)} ms`.padStart(21)} │ ${`${l.p50.toFixed(0)} / ${l.p99.toFixed(0)} ms`.padStart(18)} │ ${`${overhead.toFixed(0)} ms`.padStart(12)} │ ${pass ? 'PASS' : 'MISS'}`,
    );
  }
  lines.push(
    '',
    `targets: interpreter p50 ≤ ${TARGET_INTERPRETER_P50} ms; LLM overhead p50 ≤ ${TARGET_OVERHEAD_P50} ms`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed ? 1 : 0;
}

runBenchmark(main);
