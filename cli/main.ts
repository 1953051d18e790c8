// The `tidemark` command. Reads the same configuration as the server (environment over .env) and talks to the
// same stores, so it works while the service runs; `login` and `annotations` instead talk HTTP to a server,
// possibly on another machine, and read only the client settings. Every level answers --help; a command's code is loaded only
// when it runs, so help and --version answer at once.
import { parseArgs } from 'node:util';
import type { Pool } from 'pg';
import { VERSION } from '../lib/version';
import type { Context, Io, Values } from './context';
import type { RemoteContext } from './remote';

type Options = Record<string, { type: 'string' | 'boolean' }>;

type Command = {
  usage: string;
  summary: string;
  options: Options;
  /**
   * The value keys of the positional arguments the command takes, in order (`jobs run <name>`, `admin rates set
   * <currency> <rate>`); none when absent. Missing ones are left undefined for the command to report.
   */
  positional?: string | readonly string[];
} & (
  | { remote?: false; load(): Promise<(values: Values, ctx: Context) => Promise<void>> }
  // Talks HTTP to a server (possibly on another machine): reads only the client settings, never the server's.
  | { remote: true; load(): Promise<(values: Values, ctx: RemoteContext) => Promise<void>> }
);

const json = { json: { type: 'boolean' } } as const;

const COMMANDS: Record<string, Command> = {
  migrate: {
    summary: 'apply pending PostgreSQL and ClickHouse migrations',
    usage: 'tidemark migrate\n  Applies pending PostgreSQL and ClickHouse migrations (safe while the service runs).',
    options: {},
    load: () => import('./commands/migrate').then((m) => m.runMigrate),
  },
  rollup: {
    summary: "bring every website's daily rollups up to date now",
    usage:
      "tidemark rollup\n  Brings every website's daily rollups up to its last closed day now (the clock does this every 10 minutes,\n  62 days per website per run), then merges the rollup tables into one part per partition; run it after an\n  upgrade or an import to backfill at once.",
    options: {},
    load: () => import('./commands/rollup').then((m) => m.runRollup),
  },
  status: {
    summary: 'roles up, queue depths, store size, last scheduled job runs',
    usage:
      "tidemark status [--json]\n  The roles that are up (with version, host, pid), the depth of each queue, the store's size and the last run\n  of each scheduled job.",
    options: json,
    load: () => import('./commands/status').then((m) => m.runStatus),
  },
  snippet: {
    summary: "print a website's tracking script tag",
    usage:
      "tidemark snippet --website <id> [--persist] [--allow-localhost] [--json]\n  Prints the script tag to paste into the website's pages (PUBLIC_URL must be the address browsers reach).",
    options: {
      website: { type: 'string' },
      persist: { type: 'boolean' },
      'allow-localhost': { type: 'boolean' },
      ...json,
    },
    load: () => import('./commands/snippet').then((m) => m.runSnippet),
  },
  backup: {
    summary: 'copy PostgreSQL and the ClickHouse source tables into a directory',
    usage:
      'tidemark backup --to <new directory>\n  Writes every PostgreSQL table (one consistent snapshot) and the ClickHouse tables ingestion writes\n' +
      '  (events, interactions, error events, replays; each one snapshot) with a manifest of row counts. Safe while\n' +
      '  the service runs: events accepted meanwhile may or may not be included, and queued ones are not.',
    options: { to: { type: 'string' } },
    load: () => import('./commands/backup').then((m) => m.runBackup),
  },
  restore: {
    summary: 'load a backup into an empty instance',
    usage:
      'tidemark restore --from <backup directory>\n  Onto an empty instance (new DATABASE_URL and CLICKHOUSE_DATABASE, roles stopped): migrates, copies the\n' +
      "  backup in, checks every table's row count against the manifest, takes the backup's instance id and\n" +
      '  rebuilds the rollups.',
    options: { from: { type: 'string' } },
    load: () => import('./commands/backup').then((m) => m.runRestore),
  },
  'queue failed': {
    summary: 'list jobs that failed for good',
    usage:
      'tidemark queue failed [--queue ingest|jobs|webhook-events|webhook-deliveries|llm] [--limit N]\n  Lists jobs that failed for good (retries exhausted or malformed), newest first.',
    options: { queue: { type: 'string' }, limit: { type: 'string' } },
    load: () => import('./commands/queue').then((m) => m.runQueueFailed),
  },
  'queue retry': {
    summary: 'move failed jobs back to the queue',
    usage:
      'tidemark queue retry [--queue ingest|jobs|webhook-events|webhook-deliveries|llm] (--id <job id> | --all)\n  Moves failed jobs back to the queue to be processed again.',
    options: { queue: { type: 'string' }, id: { type: 'string' }, all: { type: 'boolean' } },
    load: () => import('./commands/queue').then((m) => m.runQueueRetry),
  },
  'jobs list': {
    summary: 'scheduled jobs: schedule, last run, its duration and outcome',
    usage:
      'tidemark jobs list [--json]\n  Every scheduled job: its schedule (cron, UTC), when it last ran, how long it took, its outcome, who ran it\n' +
      '  (worker#N: attempt N of a queued run; cli: `tidemark jobs run`), its scope and its error.',
    options: json,
    load: () => import('./commands/jobs').then((m) => m.runJobsList),
  },
  'jobs run': {
    summary: "run a scheduled job's body now, for one website, a day or a range of days",
    usage:
      'tidemark jobs run <name> [--website <id>] [--date YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD]\n' +
      '  Runs the job here and now (not through the queue), recorded like a scheduled run. Without --website, every\n' +
      '  website the job covers; without a date, the period the clock would run it for. A range runs day by day,\n' +
      '  oldest first, a line per day (at most 366 days); a re-run for the same day rewrites the same rows. Exit 1\n' +
      '  when any run failed. `tidemark jobs list` names the jobs.',
    options: {
      website: { type: 'string' },
      date: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
    positional: 'name',
    load: () => import('./commands/jobs').then((m) => m.runJobsRun),
  },
  'admin create-user': {
    summary: 'create a user with a personal team',
    usage:
      'tidemark admin create-user --email <email> [--name <full name>] [--password-stdin] [--owner]\n' +
      '  Creates a user with a personal team on DEFAULT_PLAN. The first user of an instance owns it (team on plan\n' +
      '  unlimited); --owner makes this user the owner instead. Without --password-stdin a password is generated and printed.',
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      owner: { type: 'boolean' },
    },
    load: () => import('./commands/admin').then((m) => m.runCreateUser),
  },
  'admin reset-password': {
    summary: "set a user's password and sign them out everywhere",
    usage:
      'tidemark admin reset-password --email <email> [--password-stdin]\n' +
      '  Sets a new password and signs the user out everywhere. Without --password-stdin one is generated and printed.',
    options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    load: () => import('./commands/admin').then((m) => m.runResetPassword),
  },
  'admin invite': {
    summary: 'print a one-time link that lets a person join a team',
    usage:
      'tidemark admin invite --team <id> --email <email> [--role viewer|editor|admin|owner]\n' +
      '  Creates a one-time invite link (valid 7 days) for that email to join the team, registering on the way\n' +
      '  if they have no account (also when ALLOW_SIGNUP=false).',
    options: { team: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
    load: () => import('./commands/admin').then((m) => m.runInvite),
  },
  'admin plan': {
    summary: "set a team's plan",
    usage:
      "tidemark admin plan --team <id> --plan free|pro|scale|enterprise|unlimited\n  Sets a team's plan (legacy names starter = pro, professional = scale are accepted and reported back);\n  stored data follows the plan's retention.",
    options: { team: { type: 'string' }, plan: { type: 'string' } },
    load: () => import('./commands/admin').then((m) => m.runPlan),
  },
  'admin limits': {
    summary: "override a team's request and event limits",
    usage:
      'tidemark admin limits --team <id> [--rpm N|unlimited|plan] [--monthly N|unlimited|plan] [--events N|unlimited|plan]\n' +
      '  Overrides a team\'s per-minute, per-month request and monthly event limits; "plan" restores the plan\'s value.',
    options: {
      team: { type: 'string' },
      rpm: { type: 'string' },
      monthly: { type: 'string' },
      events: { type: 'string' },
    },
    load: () => import('./commands/admin').then((m) => m.runLimits),
  },
  'admin rates set': {
    summary: 'set an exchange rate for converting revenue (lifetime value)',
    usage:
      'tidemark admin rates set <CURRENCY> <USD per unit> [--date YYYY-MM-DD]\n' +
      '  Sets the value of one unit of CURRENCY in US dollars (EUR 1.08: one euro is 1.08 USD) from --date on\n' +
      '  (default today, UTC) until a later rate of that currency; setting a date again replaces its rate. A\n' +
      '  purchase takes the latest rate dated on or before its day; other targets cross through USD. Lifetime value\n' +
      "  converts purchases into each website's revenue currency with them and leaves out (and counts) the rest.",
    options: { date: { type: 'string' } },
    positional: ['currency', 'rate'],
    load: () => import('./commands/rates').then((m) => m.runRatesSet),
  },
  'admin rates list': {
    summary: 'list exchange rates',
    usage:
      'tidemark admin rates list [CURRENCY] [--json]\n  Every exchange rate (US dollars per unit) with the day it applies from, by currency and date.',
    options: json,
    positional: 'currency',
    load: () => import('./commands/rates').then((m) => m.runRatesList),
  },
  'admin users list': {
    summary: 'list users',
    usage:
      'tidemark admin users list [--json]\n  Every user: id, email, name, whether they own the instance, active team memberships.',
    options: json,
    load: () => import('./commands/lists').then((m) => m.runUsersList),
  },
  'admin teams list': {
    summary: 'list teams',
    usage: 'tidemark admin teams list [--json]\n  Every team: id, name, plan, members, websites, limit overrides.',
    options: json,
    load: () => import('./commands/lists').then((m) => m.runTeamsList),
  },
  'admin websites list': {
    summary: 'list websites',
    usage: 'tidemark admin websites list [--json]\n  Every website: id, domain, name, tracking code, team, time zone.',
    options: json,
    load: () => import('./commands/lists').then((m) => m.runWebsitesList),
  },
  login: {
    remote: true,
    summary: 'sign in to a Tidemark server for the annotations commands',
    usage:
      'tidemark login --url <server URL> --email <email> [--site-id <website id>] [--json]\n' +
      '  Signs in over HTTP (password from a prompt without echo, or the first line of stdin) and keeps the session\n' +
      '  in $TIDEMARK_CONFIG_DIR, $XDG_CONFIG_HOME/tidemark or ~/.config/tidemark (session.json, mode 0600).\n' +
      '  --site-id saves the website the annotations commands use by default. In CI, set TIDEMARK_URL and\n' +
      '  TIDEMARK_SESSION (the session cookie value) instead.',
    options: { url: { type: 'string' }, email: { type: 'string' }, 'site-id': { type: 'string' }, ...json },
    load: () => import('./commands/login').then((m) => m.runLogin),
  },
  'annotations create': {
    remote: true,
    summary: 'mark a deploy, release, campaign or incident on the charts',
    usage:
      'tidemark annotations create --type deploy|release|campaign|incident|custom --message <text>\n' +
      '    [--occurred-at <ISO 8601, default now>] [--site-id <website id>] [--metadata <JSON object>] [--json]\n' +
      '  Creates an annotation (editor role or higher) on the server of `tidemark login` or TIDEMARK_URL. The website\n' +
      '  is --site-id, else TIDEMARK_SITE_ID, else the one saved by `tidemark login --site-id`.',
    options: {
      type: { type: 'string' },
      message: { type: 'string' },
      'occurred-at': { type: 'string' },
      'site-id': { type: 'string' },
      metadata: { type: 'string' },
      ...json,
    },
    load: () => import('./commands/annotations').then((m) => m.runAnnotationsCreate),
  },
  'annotations list': {
    remote: true,
    summary: "list a website's annotations, newest first",
    usage:
      'tidemark annotations list [--site-id <website id>] [--from <ISO 8601>] [--to <ISO 8601>] [--json]\n' +
      '  Up to 500 annotations with occurred_at in the window, newest first.',
    options: { 'site-id': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ...json },
    load: () => import('./commands/annotations').then((m) => m.runAnnotationsList),
  },
  'annotations delete': {
    remote: true,
    summary: 'delete an annotation for good',
    usage:
      'tidemark annotations delete --id <annotation id> [--json]\n  Deletes the annotation permanently (editor role or higher).',
    options: { id: { type: 'string' }, ...json },
    load: () => import('./commands/annotations').then((m) => m.runAnnotationsDelete),
  },
};

const defaultIo: Io = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  ...(process.stdin.isTTY
    ? { secret: (prompt: string) => import('./prompt').then((m) => m.promptHidden(prompt)) }
    : {}),
};

/** Help for a level: every command whose name starts with `group` (all of them for ''). */
function helpText(group: string): string {
  const names = Object.keys(COMMANDS).filter((n) => group === '' || n === group || n.startsWith(`${group} `));
  const width = Math.max(...names.map((n) => n.length));
  return [
    `Usage: tidemark ${group ? `${group} ` : ''}<command> [options]`,
    '',
    'Commands:',
    ...names.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n].summary}`),
    '',
    group
      ? `Run \`tidemark ${group} <command> --help\` for a command's options.`
      : "Run `tidemark <command> --help` for a command's options; `tidemark --version` for the version.",
  ].join('\n');
}

const HELP = new Set(['--help', '-h', 'help']);
const CLI_WAIT_MS = 3_000;

/** The longest command name the arguments start with, and the words of a group they name. */
function resolve(argv: string[]): { name?: string; group: string; rest: string[] } {
  const words: string[] = [];
  for (const word of argv) {
    if (word.startsWith('-')) break;
    words.push(word);
  }
  for (let n = words.length; n > 0; n--) {
    const name = words.slice(0, n).join(' ');
    if (COMMANDS[name]) return { name, group: name, rest: argv.slice(n) };
  }
  // The longest prefix that is a group of commands (`admin`, `admin users`).
  for (let n = words.length; n > 0; n--) {
    const group = words.slice(0, n).join(' ');
    if (Object.keys(COMMANDS).some((c) => c.startsWith(`${group} `))) return { group, rest: argv.slice(n) };
  }
  return { group: words.join(' '), rest: argv.slice(words.length) };
}

/** Runs one CLI invocation; returns the exit code (0 done, 1 failed, 2 usage, 78 configuration). */
export async function main(
  argv: string[],
  io: Io = defaultIo,
  env?: Record<string, string | undefined>,
): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version')) {
    io.out(`tidemark ${VERSION}`);
    return 0;
  }
  const { name, group, rest } = resolve(argv);
  if (!name) {
    const known = group === '' || Object.keys(COMMANDS).some((c) => c.startsWith(`${group} `));
    if (known && (rest.length === 0 || rest.every((a) => HELP.has(a)))) {
      io.out(helpText(group));
      return rest.length === 0 && group === '' ? 2 : 0;
    }
    io.err(`tidemark: unknown command "${[group, ...rest].join(' ').trim()}" (see tidemark --help)`);
    return 2;
  }
  const command = COMMANDS[name];
  let values: Values;
  try {
    const parsed = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command.positional !== undefined,
    });
    values = parsed.values;
    const keys = command.positional === undefined ? [] : [command.positional].flat();
    if (parsed.positionals.length > keys.length)
      throw new Error(`Unexpected argument '${parsed.positionals[keys.length]}'`);
    keys.forEach((key, i) => {
      values[key] = parsed.positionals[i];
    });
  } catch (err) {
    io.err(`tidemark ${name}: ${(err as Error).message} (see tidemark ${name} --help)`);
    return 2;
  }
  if (values.help) {
    io.out(command.usage);
    return 0;
  }
  if (command.remote) return runRemote(name, command, values, io, env);
  const { ConfigError, environment, loadConfig } = await import('../lib/config');
  const { UsageError } = await import('./context');
  let pool: Pool | undefined;
  try {
    const config = loadConfig(env ?? environment());
    const run = await command.load();
    const ctx: Context = {
      config,
      io,
      async pool() {
        if (!pool) {
          const [db, startup, log] = await Promise.all([
            import('../lib/db/pool'),
            import('../lib/process/startup'),
            import('../lib/log'),
          ]);
          // A command names DATABASE_URL when PostgreSQL is not there, after a short wait rather than the roles' long one.
          await startup.reachPostgres(config.DATABASE_URL, log.createLogger('silent', 'cli'), CLI_WAIT_MS);
          pool = db.createPool(config.DATABASE_URL, 2);
        }
        return pool;
      },
    };
    await run(values, ctx);
    return 0;
  } catch (err) {
    // 42P01 undefined_table: a database nothing has migrated yet.
    const message =
      (err as { code?: string }).code === '42P01'
        ? 'the database in DATABASE_URL has no Tidemark tables yet: run `tidemark migrate` (or start the service) first'
        : oneLine((err as Error).message);
    if (err instanceof UsageError) {
      io.err(`tidemark ${name}: ${message} (see tidemark ${name} --help)`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`tidemark: ${message}`);
      return 78;
    }
    io.err(`tidemark ${name}: ${message}`);
    return 1;
  } finally {
    await pool?.end();
  }
}

/** An HTTP command: exit 0 done, 1 refused by the server or unreachable, 2 usage, 78 not logged in or bad settings. */
async function runRemote(
  name: string,
  command: Extract<Command, { remote: true }>,
  values: Values,
  io: Io,
  env: Record<string, string | undefined> | undefined,
): Promise<number> {
  const { ConfigError, environment, loadClientConfig } = await import('../lib/config');
  const { UsageError } = await import('./context');
  const { NotLoggedIn } = await import('./remote');
  try {
    const run = await command.load();
    await run(values, { client: loadClientConfig(env ?? environment()), io });
    return 0;
  } catch (err) {
    const message = oneLine((err as Error).message);
    if (err instanceof UsageError) {
      io.err(`tidemark ${name}: ${message} (see tidemark ${name} --help)`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof NotLoggedIn) {
      io.err(`tidemark ${name}: ${message}`);
      return 78;
    }
    io.err(`tidemark ${name}: ${message}`);
    return 1;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
