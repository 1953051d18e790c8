// The one reader of process.env (DESIGN §2 rule 1). Every variable of DESIGN §3 "Configuration" lives here,
// parsed with zod; a bad value stops start-up with one line naming the variable.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { UUID } from './checks';
import { storeCredentialFor } from './clickhouse/credential';
import { keptSecret } from './keptSecret';
import { PLAN_NAMES } from './plans';
import { BACKGROUND_PRIORITIES } from './process/cpuPriority';
import { writeFatal } from './process/output';
import { z } from './zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce.number().int().min(1).max(65535);

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(' or ')})` },
  );

const TRUST_PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY as Express's `trust proxy` takes it: false/0, a hop count, or a comma-separated list of proxy
 * addresses, CIDR subnets and presets. The client is then the right-most untrusted X-Forwarded-For hop.
 * `true` (trust every hop, so the client's own X-Forwarded-For wins) is refused.
 */
export function parseTrustProxy(value: string): false | number | string[] {
  const v = value.trim().toLowerCase();
  if (v === 'false' || v === 'no' || v === '0') return false;
  if (v === 'true' || v === 'yes') {
    throw new Error(
      "cannot be true (that trusts the client's own X-Forwarded-For): give a hop count or a CIDR list of your proxies",
    );
  }
  if (/^\d+$/.test(v)) {
    if (Number(v) > 32) throw new Error('must be a hop count of at most 32');
    return Number(v);
  }
  const entries = v.split(',').map((e) => e.trim());
  const bad = entries.find((e) => !isProxyEntry(e));
  if (bad !== undefined) {
    throw new Error(
      `must be a hop count or a comma-separated list of addresses, CIDRs, loopback, linklocal, uniquelocal ("${bad}" is none)`,
    );
  }
  return entries;
}

function isProxyEntry(entry: string): boolean {
  if (TRUST_PROXY_PRESETS.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = address.includes('%') ? 0 : net.isIP(address); // zone ids are not understood by Express
  if (rest.length || !family) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

const trustProxy = z.string().transform((v, ctx) => {
  try {
    return parseTrustProxy(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

// Never echoed by a configuration error, in any form.
const SECRET_VARIABLES = new Set([
  'JWT_SECRET',
  'METRICS_TOKEN',
  'OPENAI_API_KEY',
  'CLICKHOUSE_PASSWORD',
  'TIDEMARK_SESSION',
]);

/** How a configuration error shows a value: secrets withheld, a URL's password replaced by ***. */
export function shownValue(variable: string, value: string): string {
  if (SECRET_VARIABLES.has(variable) || /(SECRET|TOKEN|PASSWORD|API_KEY)$/.test(variable)) return 'value not shown';
  return `got ${JSON.stringify(maskUrlPassword(value))}`;
}

/**
 * `scheme://user:pw@host…` → `scheme://user:***@host…` (when the URL does not parse, all of user:pw is hidden),
 * and the value of every `name=value` parameter whose name speaks of a secret (`?password=`, `&sslpassword=`,
 * `?token=`, a libpq `password=… ` keyword) → `***`.
 */
export function maskUrlPassword(value: string): string {
  return maskSecretParameters(maskUserinfo(value));
}

function maskUserinfo(value: string): string {
  const scheme = value.indexOf('://');
  const at = value.lastIndexOf('@');
  if (scheme < 0 || at < scheme) return value;
  try {
    const parsed = new URL(value);
    if (!parsed.password) return value;
    parsed.password = '***';
    return parsed.href;
  } catch {
    return `${value.slice(0, scheme + 3)}***${value.slice(at)}`;
  }
}

const PARAMETER = /(^|[?&;\s])([^\s=&#;?]+)=('(?:\\.|[^'\\])*'?|[^\s&#;]*)/g;
const SECRET_NAME = /password|passwd|pwd|secret|token|key/;

function maskSecretParameters(value: string): string {
  return value.replace(PARAMETER, (whole, before: string, name: string) => {
    let decoded = name;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      // not percent-encoded text: judge the name as written
    }
    return SECRET_NAME.test(decoded.toLowerCase()) ? `${before}${name}=***` : whole;
  });
}

const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a plain identifier');

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: port.default(3000),
  PUBLIC_URL: url(['http:', 'https:']).optional(),
  DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgres://postgres@127.0.0.1:5432/tidemark'),
  REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  DEDUPE_REDIS_URL: url(['redis:', 'rediss:']).optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - only')
    .default('tidemark'),
  CLICKHOUSE_URL: url(['http:', 'https:']).optional(),
  CLICKHOUSE_USER: z
    .string()
    .regex(/^[^:\s]{1,128}$/, 'must be a user name without spaces or ":"')
    .default('default'),
  CLICKHOUSE_PASSWORD: z.string().optional(),
  CLICKHOUSE_DATABASE: identifier.default('tidemark'),
  CLICKHOUSE_CLUSTER: identifier.optional(),
  STORE_PORT: port.default(8123),
  BACKGROUND_PRIORITY: z.enum(BACKGROUND_PRIORITIES).default('idle'),
  QUEUE_MEMORY_LIMIT_PERCENT: z.coerce.number().int().min(1).max(100).default(90),
  DATA_DIR: z.string().min(1).default('./data'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  TRUST_PROXY: trustProxy.default(false),
  ALLOW_SIGNUP: bool.default(true),
  DEFAULT_PLAN: z.enum(PLAN_NAMES).default('free'),
  ALLOW_VOLATILE_QUEUE: bool.default(false),
  /** Notification webhooks may be http:// and point at private or loopback hosts (a test or intranet install). */
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  /** smtp(s)://user:password@host:port: email (reports, alerts, invites) is off while unset. */
  SMTP_URL: url(['smtp:', 'smtps:']).optional(),
  /** The From of every email: an address or `Name <address>`; tidemark@<PUBLIC_URL's host> when unset. */
  MAIL_FROM: z.string().trim().min(3).max(320).optional(),
  SIGNUP_LIMIT_PER_CLIENT: z.coerce.number().int().min(1).max(1_000_000).default(5),
  SIGNUP_LIMIT_TOTAL: z.coerce.number().int().min(1).max(1_000_000).default(50),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: url(['http:', 'https:']).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** How long a natural-language question waits for the model (and the web role for the worker's answer). */
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  GEOIP_CITY_DB_V4: z.string().min(1).optional(),
  GEOIP_CITY_DB_V6: z.string().min(1).optional(),
  STARTUP_WAIT_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

type Env = z.infer<typeof envSchema>;

export type Config = Omit<
  Env,
  'PUBLIC_URL' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_PASSWORD' | 'DEDUPE_REDIS_URL' | 'JWT_SECRET' | 'DATA_DIR'
> & {
  PUBLIC_URL: string;
  CLICKHOUSE_URL: string;
  /** True when CLICKHOUSE_URL was not set: this install runs the embedded store role. */
  EMBEDDED_STORE: boolean;
  /** CLICKHOUSE_PASSWORD; for the embedded store when unset, the credential kept under DATA_DIR. */
  CLICKHOUSE_PASSWORD: string;
  DEDUPE_REDIS_URL: string;
  JWT_SECRET: string;
  DATA_DIR: string;
};

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`invalid configuration: ${variable} ${reason}`);
  }
}

/** Parses an environment (process.env by default). Throws ConfigError naming the first bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue.path[0]);
    throw new ConfigError(variable, `${issue.message} (${shownValue(variable, raw[variable] ?? '')})`);
  }
  const env = parsed.data;
  const dataDir = path.resolve(env.DATA_DIR);
  return {
    ...env,
    DATA_DIR: dataDir,
    PUBLIC_URL: env.PUBLIC_URL ?? `http://localhost:${env.PORT}`,
    CLICKHOUSE_URL: env.CLICKHOUSE_URL ?? `http://127.0.0.1:${env.STORE_PORT}`,
    EMBEDDED_STORE: env.CLICKHOUSE_URL === undefined,
    CLICKHOUSE_PASSWORD: env.CLICKHOUSE_PASSWORD ?? (env.CLICKHOUSE_URL === undefined ? storeCredential(dataDir) : ''),
    DEDUPE_REDIS_URL: env.DEDUPE_REDIS_URL ?? env.REDIS_URL,
    JWT_SECRET: env.JWT_SECRET ?? jwtSecretFor(env.NODE_ENV, dataDir),
  };
}

/** The embedded store's credential under DATA_DIR (lib/clickhouse/credential.ts), created on first use. */
function storeCredential(dataDir: string): string {
  try {
    return storeCredentialFor(dataDir);
  } catch (err) {
    throw new ConfigError('DATA_DIR', `cannot keep the store credential: ${(err as Error).message}`);
  }
}

/** Outside production a missing JWT_SECRET is generated once and kept under DATA_DIR, so restarts keep sessions. */
function jwtSecretFor(nodeEnv: Env['NODE_ENV'], dataDir: string): string {
  if (nodeEnv === 'production') throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  try {
    return keptSecret(dataDir, 'jwt-secret', 48);
  } catch (err) {
    throw new ConfigError('DATA_DIR', `cannot keep the JWT secret: ${(err as Error).message}`);
  }
}

/**
 * The process environment over `.env` in the working directory (when there is one): a variable set in the
 * environment wins over the file's.
 */
export function environment(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  let text: string;
  try {
    text = fs.readFileSync(path.join(cwd, '.env'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return env;
    throw new ConfigError('.env', `cannot be read: ${(err as Error).message}`);
  }
  return { ...parseEnv(text), ...env };
}

let cached: Config | undefined;

/** The process configuration, parsed once. Entry points call this; libraries receive Config as a parameter. */
export function config(): Config {
  cached ??= loadConfig(environment());
  return cached;
}

/** For entry points: parse or exit with the one-line reason. */
export function configOrExit(role = 'tidemark'): Config {
  try {
    return config();
  } catch (err) {
    if (err instanceof ConfigError) {
      writeFatal(role, err.message, { setting: err.variable });
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

// ---- the HTTP commands of the CLI ----------------------------------------------------------------------
// `tidemark login` and `tidemark annotations` talk HTTP to a server that may run on another machine: they read
// only these variables, never the server's configuration above.
const clientEnvSchema = z.object({
  TIDEMARK_URL: url(['http:', 'https:']).optional(),
  /** The session cookie's value, for CI where no `tidemark login` has run. */
  TIDEMARK_SESSION: z.string().max(512).optional(),
  TIDEMARK_SITE_ID: z.string().regex(UUID, 'must be a website id (UUID)').optional(),
  TIDEMARK_CONFIG_DIR: z.string().optional(),
  XDG_CONFIG_HOME: z.string().optional(),
  HOME: z.string().optional(),
});

export interface ClientConfig {
  url?: string;
  session?: string;
  siteId?: string;
  /** Where `tidemark login` keeps the session: TIDEMARK_CONFIG_DIR, else $XDG_CONFIG_HOME/tidemark, else ~/.config/tidemark. */
  configDir: string;
}

/** The HTTP commands' settings. Throws ConfigError naming the first bad variable. */
export function loadClientConfig(source: NodeJS.ProcessEnv = process.env): ClientConfig {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(clientEnvSchema.shape)) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = clientEnvSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue.path[0]);
    throw new ConfigError(variable, `${issue.message} (${shownValue(variable, raw[variable] ?? '')})`);
  }
  const env = parsed.data;
  const configHome = env.XDG_CONFIG_HOME ?? path.join(env.HOME ?? os.homedir(), '.config');
  return {
    url: env.TIDEMARK_URL,
    session: env.TIDEMARK_SESSION,
    siteId: env.TIDEMARK_SITE_ID?.toLowerCase(),
    configDir: path.resolve(env.TIDEMARK_CONFIG_DIR ?? path.join(configHome, 'tidemark')),
  };
}
