// The embedded engine's own walls (measured on chdb 3.4.0 / ClickHouse 26.7): chDB runs every statement as
// the user `default` of the users file named by its config, and enforces that user's grants, its settings
// constraints and each connection's active roles. So the store's engine may not read or write files or URLs,
// nor reach other servers, except through a role only the store's own connection activates: the one that
// reads its insert files. What the grants cannot reach is refused by store-guard.ts.
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'chdb';
import type { GuardPolicy } from './store-guard';

/** Granted to `default` but active only on the connection that runs the store's own file() inserts. */
export const INSERT_FILES_ROLE = 'store_insert_files';

/** Engines a client's DDL may name (the MergeTree family of a single server, Null, Memory, Atomic databases). */
export const ALLOWED_ENGINES = [
  'MergeTree',
  'ReplacingMergeTree',
  'SummingMergeTree',
  'AggregatingMergeTree',
  'CollapsingMergeTree',
  'VersionedCollapsingMergeTree',
  'CoalescingMergeTree',
  'Null',
  'Memory',
  'Atomic',
];

/** Table functions that read only the engine's own tables or generate rows; every other one is refused. */
const SAFE_TABLE_FUNCTIONS = new Set([
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'primes',
  'generate_series',
  'generateseries',
  'generaterandom',
  'values',
  'sqlstandardvalues',
  'null',
  'view',
  'viewexplain',
  'viewifpermitted',
  'merge',
  'loop',
  'dictionary',
  'mergetreeindex',
  'mergetreeprojection',
  'mergetreeanalyzeindexes',
  'mergetreeanalyzeindexesuuid',
  'mergetreetextindex',
  'fuzzjson',
  'fuzzquery',
]);

/** Functions refused in any position: file() reads any path (scalar), disk() defines a disk on any path or URL. */
const DENIED_FUNCTIONS = ['file', 'disk'];

/**
 * Settings a statement may not change: each names a file the engine would read or write, or holds SQL
 * (a filter, a dialect, a default engine) that would run past the checks of store-guard.ts.
 */
const FIXED_SETTINGS = [
  'input_format_record_errors_file_path',
  'format_schema',
  'output_format_schema',
  'format_template_resultset',
  'format_template_row',
  'format_template_rows_between_delimiter',
  'additional_table_filters',
  'additional_result_filter',
  'dialect',
  'default_table_engine',
  'default_temporary_table_engine',
  'parallel_replicas_custom_key',
  'allow_experimental_eval_table_function',
  'rename_files_after_processing',
];

const GRANTS = [
  'GRANT SHOW, SELECT, INSERT, ALTER, CREATE DATABASE, CREATE TABLE, CREATE VIEW, CREATE TEMPORARY TABLE, DROP, TRUNCATE, OPTIMIZE, SYSTEM MERGES ON *.*',
  ...ALLOWED_ENGINES.filter((e) => e !== 'Atomic').map((e) => `GRANT TABLE ENGINE ON ${e}`),
  `GRANT ${INSERT_FILES_ROLE}`,
];

/** Writes the engine's config and users files under `dir` (rewritten at every start) and returns the config's path. */
export function writeEngineConfig(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const users = path.join(dir, 'users.xml');
  const config = path.join(dir, 'config.xml');
  const constraints = FIXED_SETTINGS.map((s) => `<${s}><readonly/></${s}>`).join('');
  const grants = GRANTS.map((g) => `<query>${g}</query>`).join('');
  writePrivate(
    users,
    `<clickhouse><profiles><default><constraints>${constraints}</constraints></default></profiles>` +
      `<quotas><default></default></quotas>` +
      `<roles><${INSERT_FILES_ROLE}><grants><query>GRANT READ ON FILE</query></grants></${INSERT_FILES_ROLE}></roles>` +
      `<users><default><password></password><networks><ip>::/0</ip></networks>` +
      `<profile>default</profile><quota>default</quota><grants>${grants}</grants></default></users></clickhouse>\n`,
  );
  // An explicit config also keeps chDB from reading ./config.xml or ~/.clickhouse-local/ instead.
  writePrivate(
    config,
    `<clickhouse><user_directories><users_xml><path>${xmlText(users)}</path></users_xml></user_directories></clickhouse>\n`,
  );
  return config;
}

function xmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function writePrivate(file: string, text: string): void {
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/** A connection that runs clients' statements: without the insert-files role, checked before it is used. */
export async function openClientConnection(dataDir: string, args: string[]): Promise<Session> {
  const session = new Session(dataDir, { connectionArgs: args });
  try {
    await session.queryAsync('SET ROLE NONE');
    const roles = (await session.queryAsync('SELECT currentRoles()', { format: 'JSONCompactEachRow' })).text().trim();
    if (roles !== '[[]]') throw new Error(`store: a client connection still has roles ${roles}`);
    return session;
  } catch (err) {
    session.close();
    throw err;
  }
}

/** What store-guard.ts refuses: every table function not known to be safe (as this engine lists them), file(), disk(). */
export async function guardPolicy(session: Session): Promise<GuardPolicy> {
  const listed = (
    await session.queryAsync('SELECT name FROM system.table_functions', { format: 'JSONCompactEachRow' })
  ).text();
  const names = listed
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as [string])[0].toLowerCase());
  return {
    deniedFunctions: new Set([...names.filter((n) => !SAFE_TABLE_FUNCTIONS.has(n)), ...DENIED_FUNCTIONS]),
    allowedEngines: new Set(ALLOWED_ENGINES.map((e) => e.toLowerCase())),
  };
}
