import { SESSION_COOKIE } from '../../lib/auth/tokens';
import { requireString, requireUuid, UsageError, type Values } from '../context';
import { type RemoteContext, RemoteError, readSession, request, saveSession, serverUrl } from '../remote';

/** `tidemark login`: signs in over HTTP and keeps the session cookie in a file only its user can read. */
export async function runLogin(v: Values, ctx: RemoteContext): Promise<void> {
  const given = typeof v.url === 'string' ? v.url : ctx.client.url;
  let url: string;
  try {
    url = serverUrl(requireString(given, '--url'));
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--url must be the server's http(s) address, such as https://analytics.example.com`);
  }
  const email = requireString(v.email, '--email');
  const siteFlag = v['site-id'] === undefined ? undefined : requireUuid(v['site-id'], '--site-id', 'website');
  const password = ctx.io.secret
    ? await ctx.io.secret(`Password for ${email} at ${url}: `)
    : ((await ctx.io.stdin()).split(/\r?\n/)[0] ?? '');
  if (!password) throw new UsageError('no password given: type it at the prompt, or pipe it on stdin');

  const answer = await request(url, 'POST', '/api/auth/login', { body: { email, password } });
  if (answer.status !== 200) {
    const message = answer.body?.error?.message ?? `HTTP ${answer.status}`;
    throw new RemoteError(`login refused: ${message} (HTTP ${answer.status}); check --email and the password`);
  }
  const cookie = answer.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  const session = cookie?.split(';')[0].slice(SESSION_COOKIE.length + 1);
  if (!session) throw new RemoteError(`${url} signed in but set no session cookie; is it a Tidemark server?`);

  if (siteFlag) {
    const check = await request(url, 'GET', `/api/annotations?websiteId=${siteFlag}`, { session });
    if (check.status !== 200)
      throw new RemoteError(
        `--site-id ${siteFlag}: ${check.body?.error?.message ?? `HTTP ${check.status}`} (HTTP ${check.status}); not saved`,
      );
  }
  const earlier = readSession(ctx.client);
  const siteId = siteFlag ?? (earlier?.url === url ? earlier.site_id : undefined);
  const file = saveSession(ctx.client, { url, email, session, ...(siteId ? { site_id: siteId } : {}) });
  if (v.json === true) ctx.io.out(JSON.stringify({ url, email, site_id: siteId ?? null, session_file: file }));
  else ctx.io.out(`logged in to ${url} as ${email}${siteId ? ` (site ${siteId})` : ''}; session saved in ${file}`);
}
