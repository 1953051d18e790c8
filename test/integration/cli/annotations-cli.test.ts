// `tidemark login` and `tidemark annotations` end to end (issue 23): the built command, run as a separate
// process with only the client settings (no DATABASE_URL or other server configuration), against a running
// web process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { startWebProcess, type WebProcess } from '../../helpers/web-process';

let ctx: TestContext;
let web: WebProcess;
let user: TestUser;
let site: { id: string };
let home: string;

// Each run starts a Node process; on a busy machine a dozen of them take a while.
jest.setTimeout(180_000);

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'tidemark.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tidemark` with only PATH, HOME and `env`; `stdin` is piped (not a terminal). */
function tidemark(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, TIDEMARK_CONFIG_DIR: path.join(home, 'cfg'), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdin.end(stdin);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  ctx = await createTestContext();
  web = await startWebProcess(ctx.config);
  user = await registerUser(ctx, 'pro', 'cli');
  site = await createWebsite(ctx, user, 'cli.example');
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-cli-'));
}, 60_000);
afterAll(async () => {
  await web?.stop();
  await ctx.close();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('tidemark login, annotations create, list --json, delete', () => {
  it('runs the whole flow against the server, with the session in a 0600 file', async () => {
    const login = await tidemark(
      ['login', '--url', `${web.baseUrl}/`, '--email', user.email, '--site-id', site.id],
      {},
      'password-123\n',
    );
    expect(login).toMatchObject({ code: 0, stderr: '' });
    const file = path.join(home, 'cfg', 'session.json');
    expect(login.stdout).toContain(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(home, 'cfg')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({
      url: web.baseUrl,
      email: user.email,
      site_id: site.id,
      session: expect.any(String),
    });

    const before = Date.now();
    const created = await tidemark(['annotations', 'create', '--type', 'deploy', '--message', 'v2.0.0', '--json']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const annotation = JSON.parse(created.stdout);
    expect(annotation).toMatchObject({ website_id: site.id, type: 'deploy', message: 'v2.0.0', created_by: user.id });
    expect(Date.parse(annotation.occurred_at)).toBeGreaterThanOrEqual(before - 1000);

    const explicit = await tidemark([
      'annotations',
      'create',
      '--type',
      'release',
      '--message',
      'r1',
      '--occurred-at',
      '2026-01-02T03:04:05Z',
      '--metadata',
      '{"commit":"abc"}',
    ]);
    expect(explicit.code).toBe(0);
    expect(explicit.stdout).toMatch(/^created release annotation [0-9a-f-]{36} on .* at 2026-01-02T03:04:05.000Z\n$/);

    const listed = await tidemark(['annotations', 'list', '--json']);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout);
    expect(rows.map((a: { message: string }) => a.message)).toEqual(['v2.0.0', 'r1']);
    expect(rows[1].metadata_json).toEqual({ commit: 'abc' });

    const window = await tidemark(['annotations', 'list', '--to', '2026-06-01T00:00:00Z']);
    expect(window.code).toBe(0);
    expect(window.stdout).toMatch(/^id\s+occurred_at\s+type\s+message\n.*release\s+r1\n$/);

    const deleted = await tidemark(['annotations', 'delete', '--id', annotation.id]);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted annotation ${annotation.id}\n` });
    const after = await tidemark(['annotations', 'list', '--json']);
    expect(JSON.parse(after.stdout).map((a: { id: string }) => a.id)).not.toContain(annotation.id);

    // The server refuses: one line, exit 1.
    const again = await tidemark(['annotations', 'delete', '--id', annotation.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('tidemark annotations delete: Annotation not found (HTTP 404)\n');
    const conflict = await tidemark([
      'annotations',
      'create',
      '--type',
      'release',
      '--message',
      'r2',
      '--occurred-at',
      '2026-01-02T03:06:00Z',
    ]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(
      /^tidemark annotations create: A release annotation already exists .* \(HTTP 409\)\n$/,
    );
  });

  it('CI: TIDEMARK_URL, TIDEMARK_SESSION and TIDEMARK_SITE_ID instead of a login', async () => {
    const res = await fetch(`${ctx.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: 'password-123' }),
    });
    const session = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('tidemark_session='))!
      .split(';')[0]
      .slice('tidemark_session='.length);
    const env = {
      TIDEMARK_URL: web.baseUrl,
      TIDEMARK_SESSION: session,
      TIDEMARK_SITE_ID: site.id,
      TIDEMARK_CONFIG_DIR: path.join(home, 'empty'),
    };
    const created = await tidemark(['annotations', 'create', '--type', 'incident', '--message', 'from CI'], env);
    expect(created.code).toBe(0);
    const listed = await tidemark(['annotations', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout).map((a: { message: string }) => a.message)).toContain('from CI');
    const bad = await tidemark(['annotations', 'list'], { ...env, TIDEMARK_SESSION: 'expired' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^tidemark annotations list: session not accepted \(.*\): run tidemark login --url /);
  });
});

describe('tidemark login at a terminal', () => {
  it('prompts for the password without echoing it', async () => {
    // Python's pty.spawn runs the command on a pseudo-terminal with the usual settings (echo on), as at a shell;
    // only the prompt's raw mode keeps what is typed off the screen.
    const dir = path.join(home, 'tty');
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(
        'python3',
        [
          '-c',
          'import pty, sys; pty.spawn(sys.argv[1:])',
          process.execPath,
          BIN,
          'login',
          '--url',
          web.baseUrl,
          '--email',
          user.email,
        ],
        {
          env: { PATH: process.env.PATH ?? '', HOME: home, TIDEMARK_CONFIG_DIR: dir, TERM: 'dumb' },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      let text = '';
      let typed = false;
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        // Typed only once the prompt shows, as a person would: the terminal is in raw mode by then.
        if (!typed && text.includes('Password for')) {
          typed = true;
          child.stdin.write('password-123\r');
        }
      });
      child.once('close', (code) => resolve({ code, text }));
    });
    expect(out.code).toBe(0);
    expect(out.text).toContain(`Password for ${user.email} at ${web.baseUrl}: `);
    expect(out.text).toContain(`logged in to ${web.baseUrl} as ${user.email}`);
    expect(out.text).not.toContain('password-123');
    expect(fs.statSync(path.join(dir, 'session.json')).mode & 0o777).toBe(0o600);
  });
});

describe('errors that say what to do', () => {
  it('not logged in: exit 78 and how to log in', async () => {
    const res = await tidemark(['annotations', 'list'], { TIDEMARK_CONFIG_DIR: path.join(home, 'nobody') });
    expect(res.code).toBe(78);
    expect(res.stderr).toBe(
      'tidemark annotations list: not logged in: run tidemark login --url URL --email EMAIL (or set TIDEMARK_URL and TIDEMARK_SESSION)\n',
    );
    const broken = path.join(home, 'broken');
    fs.mkdirSync(broken);
    fs.writeFileSync(path.join(broken, 'session.json'), '{not json');
    const garbled = await tidemark(['annotations', 'list'], { TIDEMARK_CONFIG_DIR: broken });
    expect(garbled.code).toBe(78);
    expect(garbled.stderr).toMatch(/session\.json is not a saved session: run tidemark login again\n$/);
    // A saved session is not sent to another server.
    const other = await tidemark(['annotations', 'list'], { TIDEMARK_URL: 'http://127.0.0.1:9' });
    expect(other.code).toBe(78);
    expect(other.stderr).toMatch(
      /not logged in to http:\/\/127\.0\.0\.1:9: run tidemark login --url http:\/\/127\.0\.0\.1:9/,
    );
  });

  it('usage mistakes: exit 2 naming the flag', async () => {
    const cases: [string[], RegExp][] = [
      [['annotations', 'create', '--message', 'm'], /--type is required/],
      [['annotations', 'create', '--type', 'rollback', '--message', 'm'], /--type /],
      [['annotations', 'create', '--type', 'deploy'], /--message is required/],
      [
        ['annotations', 'create', '--type', 'deploy', '--message', 'm', '--occurred-at', 'noon'],
        /--occurred-at must be an ISO 8601/,
      ],
      [
        ['annotations', 'create', '--type', 'deploy', '--message', 'm', '--metadata', '{'],
        /--metadata must be a JSON object/,
      ],
      [
        ['annotations', 'create', '--type', 'deploy', '--message', 'm', '--site-id', 'x'],
        /--site-id must be a website id/,
      ],
      [['annotations', 'delete'], /--id is required/],
      [['annotations', 'delete', '--id', 'abc'], /--id must be an annotation id/],
      [['login', '--url', 'ftp://x', '--email', 'a@b.c'], /--url must be the server's http\(s\) address/],
      [['login', '--url', web.baseUrl], /--email is required/],
      [['annotations', 'list', '--nope'], /Unknown option '--nope'/],
    ];
    for (const [args, message] of cases) {
      const res = await tidemark(args);
      expect({ args, code: res.code }).toEqual({ args, code: 2 });
      expect(res.stderr).toMatch(message);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('a wrong password: exit 1, and the saved session is kept', async () => {
    const file = path.join(home, 'cfg', 'session.json');
    const saved = fs.readFileSync(file, 'utf8');
    const res = await tidemark(['login', '--url', web.baseUrl, '--email', user.email], {}, 'wrong-password\n');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^tidemark login: login refused: .* \(HTTP 401\); check --email and the password\n$/);
    expect(fs.readFileSync(file, 'utf8')).toBe(saved);
  });

  it('a server that cannot be reached: exit 1', async () => {
    const res = await tidemark(['login', '--url', 'http://127.0.0.1:9', '--email', user.email], {}, 'x\n');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9 .*check the URL/);
  });

  it('--help on every subcommand', async () => {
    for (const args of [['login'], ['annotations', 'create'], ['annotations', 'list'], ['annotations', 'delete']]) {
      const res = await tidemark([...args, '--help']);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`^tidemark ${args.join(' ')} `));
    }
    const group = await tidemark(['annotations', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/annotations create .*\n.*annotations list .*\n.*annotations delete/);
  });
});
