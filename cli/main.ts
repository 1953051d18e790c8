// The `tidemark` command. Reads the same configuration as the server and talks to the same stores, so it
// works while the service runs. Each command answers --help.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Pool } from 'pg';
import { email as emailSchema, password as passwordSchema } from '../lib/accounts/schemas';
import { setTeamLimits, setTeamPlan } from '../lib/accounts/teams';
import { createUser, findUserByEmail, setPassword } from '../lib/accounts/users';
import { clickHouseTarget, createClickHouse } from '../lib/clickhouse/client';
import { loadConfig, type Config } from '../lib/config';
import { createPool, ensureDatabase } from '../lib/db/pool';
import { migrate } from '../lib/db/migrate';
import { rollupDaily } from '../jobs/rollupDaily';
import { compactRollups, settleLateMarks } from '../jobs/rollups/maintenance';
import { MARK_MARGIN_MS } from '../lib/stats/coverage';
import { HttpError } from '../lib/errors';
import { createLogger } from '../lib/log';
import { parsePlanName, PLANS } from '../lib/plans';
import { restampRetention } from '../lib/retention';
import { createProducerQueue, QUEUE_NAMES, type ProducerQueue, type QueueName } from '../lib/queue/queues';
import { waitReady } from '../lib/redis';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  stdin(): Promise<string>;
}

const defaultIo: Io = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};

interface Command {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  run(values: Record<string, string | boolean | undefined>, ctx: Context): Promise<void>;
}

interface Context {
  config: Config;
  io: Io;
  pool(): Promise<Pool>;
}

class UsageError extends Error {}

const COMMANDS: Record<string, Command> = {
  migrate: {
    usage: 'tidemark migrate\n  Applies pending PostgreSQL and ClickHouse migrations (safe while the service runs).',
    options: {},
    async run(_v, ctx) {
      const pool = await ctx.pool();
      const clickhouse = createClickHouse(clickHouseTarget(ctx.config));
      try {
        const result = await migrate({
          pool,
          clickhouse,
          clickhouseTarget: clickHouseTarget(ctx.config),
          clickhouseCluster: ctx.config.CLICKHOUSE_CLUSTER,
          logger: createLogger('warn', 'cli'),
        });
        const applied = [...result.postgres.map((m) => `postgres ${m}`), ...result.clickhouse.map((m) => `clickhouse ${m}`)];
        ctx.io.out(applied.length ? `applied:\n${applied.map((a) => `  ${a}`).join('\n')}` : 'up to date');
      } finally {
        await clickhouse.close();
      }
    },
  },
  rollup: {
    usage:
      'tidemark rollup\n  Brings every website\'s daily rollups up to its last closed day now (the clock does this every 10 minutes,\n  62 days per website per run), then merges the rollup tables into one part per partition; run it after an\n  upgrade or an import to backfill at once.',
    options: {},
    async run(_v, ctx) {
      const pool = await ctx.pool();
      const clickhouse = createClickHouse(clickHouseTarget(ctx.config), { requestTimeoutMs: 3_600_000 });
      try {
        let total = 0;
        // Days an import just wrote to again are rolled up once their late marks have settled; a client that
        // keeps sending late events keeps marking, so pending days are waited for a few times only (the clock
        // rolls them up later).
        let waits = 3;
        await settleLateMarks(clickhouse);
        for (;;) {
          const { websites, days, pending } = await rollupDaily(pool, clickhouse, createLogger('warn', 'cli'), Date.now(), { wait: true });
          total += days;
          if (days === 0 && pending > 0 && waits-- > 0) await new Promise((resolve) => setTimeout(resolve, MARK_MARGIN_MS));
          else if (days === 0) {
            // A backfill leaves several parts per month, and reads pay per part: merge them now.
            if (total > 0) await compactRollups(clickhouse, ctx.config.CLICKHOUSE_CLUSTER);
            ctx.io.out(`${websites} website(s) up to date; ${total} day(s) rolled up${pending > 0 ? `; ${pending} day(s) wait for late events to settle` : ''}`);
            return;
          }
        }
      } finally {
        await clickhouse.close();
      }
    },
  },
  'queue failed': {
    usage:
      'tidemark queue failed [--queue ingest|jobs] [--limit N]\n  Lists jobs that failed for good (retries exhausted or malformed), newest first.',
    options: { queue: { type: 'string' }, limit: { type: 'string' } },
    async run(v, ctx) {
      const limit = v.limit === undefined ? 50 : Number(v.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
      await withQueue(ctx, v.queue, async (queue) => {
        const jobs = await queue.getFailed(0, limit - 1);
        const total = await queue.getFailedCount();
        ctx.io.out(`${total} failed job(s) in ${queue.name}${total > jobs.length ? `, showing ${jobs.length}` : ''}`);
        for (const job of jobs) {
          const when = job.finishedOn ? new Date(job.finishedOn).toISOString() : '-';
          ctx.io.out(`${job.id}\t${job.name}\tattempts=${job.attemptsMade}\t${when}\t${job.failedReason ?? ''}`);
        }
      });
    },
  },
  'queue retry': {
    usage: 'tidemark queue retry [--queue ingest|jobs] (--id <job id> | --all)\n  Moves failed jobs back to the queue to be processed again.',
    options: { queue: { type: 'string' }, id: { type: 'string' }, all: { type: 'boolean' } },
    async run(v, ctx) {
      if ((v.id === undefined) === (v.all !== true)) throw new UsageError('give exactly one of --id or --all');
      await withQueue(ctx, v.queue, async (queue) => {
        const jobs = v.all ? await queue.getFailed(0, -1) : [await queue.getJob(String(v.id))];
        let retried = 0;
        for (const job of jobs) {
          if (!job) throw new UsageError(`no job ${String(v.id)} in ${queue.name}`);
          if (!(await job.isFailed())) throw new UsageError(`job ${job.id} is not failed`);
          await job.retry('failed');
          retried++;
        }
        ctx.io.out(`${retried} job(s) moved back to ${queue.name}`);
      });
    },
  },
  'admin plan': {
    usage:
      'tidemark admin plan --team <id> --plan free|pro|scale|enterprise\n  Sets a team\'s plan (legacy names starter = pro, professional = scale are accepted and reported back).',
    options: { team: { type: 'string' }, plan: { type: 'string' } },
    async run(v, ctx) {
      const team = requireUuid(v.team, '--team');
      const parsed = parsePlanName(requireString(v.plan, '--plan'));
      if (!parsed) throw new UsageError('--plan must be one of free, pro, scale, enterprise (or starter, professional)');
      const pool = await ctx.pool();
      const updated = await setTeamPlan(pool, team, parsed.plan, parsed.label);
      ctx.io.out(`team ${updated.id} is now on plan ${parsed.label}${parsed.label !== parsed.plan ? ` (${parsed.plan})` : ''}`);
      // Stored rows follow the new plan's retention.
      const clickhouse = createClickHouse(clickHouseTarget(ctx.config));
      try {
        const websites = await restampRetention(clickhouse, pool, team, parsed.plan);
        ctx.io.out(`retention of ${websites} website(s) set to ${PLANS[parsed.plan].dataRetentionDays} days`);
      } finally {
        await clickhouse.close();
      }
    },
  },
  'admin limits': {
    usage:
      'tidemark admin limits --team <id> [--rpm N|unlimited|plan] [--monthly N|unlimited|plan] [--events N|unlimited|plan]\n' +
      '  Overrides a team\'s per-minute, per-month request and monthly event limits; "plan" restores the plan\'s value.',
    options: { team: { type: 'string' }, rpm: { type: 'string' }, monthly: { type: 'string' }, events: { type: 'string' } },
    async run(v, ctx) {
      const team = requireUuid(v.team, '--team');
      const changes: Parameters<typeof setTeamLimits>[2] = {};
      for (const key of ['rpm', 'monthly', 'events'] as const) {
        if (v[key] !== undefined) changes[key] = parseLimit(String(v[key]), `--${key}`);
      }
      if (Object.keys(changes).length === 0) throw new UsageError('give at least one of --rpm, --monthly, --events');
      const updated = await setTeamLimits(await ctx.pool(), team, changes);
      ctx.io.out(`team ${updated.id} limit overrides: ${JSON.stringify(updated.limit_overrides)}`);
    },
  },
  'admin create-user': {
    usage:
      'tidemark admin create-user --email <email> [--name <full name>] [--password-stdin]\n' +
      '  Creates a user with a personal team. Without --password-stdin a random password is generated and printed.',
    options: { email: { type: 'string' }, name: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(v, ctx) {
      const email = parseWith(emailSchema, requireString(v.email, '--email'), '--email');
      const { password, generated } = await choosePassword(v['password-stdin'] === true, ctx.io);
      const { user, team } = await createUser(await ctx.pool(), {
        email,
        password,
        full_name: typeof v.name === 'string' ? v.name : undefined,
      });
      ctx.io.out(`user ${user.id} <${user.email}> created with team ${team.id}`);
      if (generated) ctx.io.out(`password: ${password}`);
    },
  },
  'admin reset-password': {
    usage:
      'tidemark admin reset-password --email <email> [--password-stdin]\n' +
      '  Sets a new password and signs the user out everywhere. Without --password-stdin one is generated and printed.',
    options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    async run(v, ctx) {
      const email = parseWith(emailSchema, requireString(v.email, '--email'), '--email');
      const pool = await ctx.pool();
      const user = await findUserByEmail(pool, email);
      if (!user) throw new UsageError(`no user with email ${email}`);
      const { password, generated } = await choosePassword(v['password-stdin'] === true, ctx.io);
      await setPassword(pool, user.id, password);
      ctx.io.out(`password of ${user.email} reset`);
      if (generated) ctx.io.out(`password: ${password}`);
    },
  },
};

async function withQueue(ctx: Context, name: unknown, fn: (queue: ProducerQueue) => Promise<void>): Promise<void> {
  const queueName = name === undefined ? QUEUE_NAMES.ingest : String(name);
  if (!(Object.values(QUEUE_NAMES) as string[]).includes(queueName)) {
    throw new UsageError(`--queue must be one of ${Object.values(QUEUE_NAMES).join(', ')}`);
  }
  const queue = createProducerQueue(queueName as QueueName, ctx.config.REDIS_URL, ctx.config.REDIS_PREFIX);
  try {
    await waitReady(queue.ownRedis());
    await fn(queue);
  } finally {
    await queue.close();
  }
}

function requireString(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`${flag} is required`);
  return value;
}

function requireUuid(value: unknown, flag: string): string {
  const s = requireString(value, flag);
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)) throw new UsageError(`${flag} must be a team id (UUID)`);
  return s;
}

function parseLimit(value: string, flag: string): number | null | 'plan' {
  if (value === 'unlimited') return null;
  if (value === 'plan') return 'plan';
  if (!/^[1-9]\d{0,11}$/.test(value)) throw new UsageError(`${flag} must be a positive whole number, "unlimited" or "plan"`);
  return Number(value);
}

function parseWith<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } } }, value: unknown, flag: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(`${flag} ${r.error.issues[0].message}`);
  return r.data;
}

async function choosePassword(fromStdin: boolean, io: Io): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: randomBytes(15).toString('base64url'), generated: true };
  const password = (await io.stdin()).replace(/\r?\n$/, '');
  return { password: parseWith(passwordSchema, password, 'password'), generated: false };
}

function helpText(): string {
  return ['Usage: tidemark <command> [options]', '', 'Commands:', ...Object.values(COMMANDS).map((c) => `  ${c.usage.split('\n')[0].replace(/^tidemark /, '')}`), '', 'Run `tidemark <command> --help` for details.'].join('\n');
}

/** Runs one CLI invocation; returns the exit code. */
export async function main(argv: string[], io: Io = defaultIo, env?: Record<string, string | undefined>): Promise<number> {
  const name = argv[0] === 'admin' || argv[0] === 'queue' ? `${argv[0]} ${argv[1] ?? ''}`.trim() : (argv[0] ?? '');
  const command = COMMANDS[name];
  const rest = argv.slice(name.split(' ').length);
  if (!command) {
    if (name === '' || name === '--help' || name === 'help' || name === '-h' || name === 'admin' || name === 'queue') {
      io.out(helpText());
      return name === '' ? 2 : 0;
    }
    io.err(`unknown command: ${name}\n${helpText()}`);
    return 2;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true }).values;
  } catch (err) {
    io.err(`${(err as Error).message}\n${command.usage}`);
    return 2;
  }
  if (values.help) {
    io.out(command.usage);
    return 0;
  }
  let pool: Pool | undefined;
  try {
    const config = env ? loadConfig(env) : loadConfig();
    const ctx: Context = {
      config,
      io,
      async pool() {
        if (!pool) {
          await ensureDatabase(config.DATABASE_URL);
          pool = createPool(config.DATABASE_URL, 2);
        }
        return pool;
      },
    };
    await command.run(values, ctx);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n${command.usage}`);
      return 2;
    }
    if (err instanceof HttpError) {
      io.err(err.message);
      return 1;
    }
    io.err((err as Error).message);
    return 1;
  } finally {
    await pool?.end();
  }
}
