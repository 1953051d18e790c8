// Text PostgreSQL cannot take (a NUL character, an unpaired UTF-16 surrogate) in any request field that is
// stored in PostgreSQL or looked up there: a 400 VALIDATION_ERROR naming the field, never a 500. One row per
// field; a new free-text field gets a row here, and a string field of a documented request body that has
// neither a row nor a reason to be exempt fails the last test.
import { UUID } from '../../../lib/checks';
import { openApiDocument } from '../../../lib/openapi/document';
import { createApiKey, createWebsite, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let call: ReturnType<typeof client>;
let user: TestUser;
let site: string;
let goalId: string;
let funnelId: string;
let conversationId: string;
let apiKey: string;
let inviteToken: string;
let sessionCookie: string;

beforeAll(async () => {
  ctx = await createTestContext();
  call = client(ctx.baseUrl);
  user = await registerUser(ctx, 'enterprise', 'unstorable');
  site = (await createWebsite(ctx, user, 'unstorable.example.com')).id;
  apiKey = (await createApiKey(ctx, user)).key;
  const goal = await call('POST', `/api/websites/${site}/goals`, { token: user.token, body: { name: 'Signup' } });
  goalId = goal.body.data.goal.id;
  const funnel = await call('POST', `/api/websites/${site}/funnels`, {
    token: user.token,
    body: { name: 'F', steps: [{ path: '/a' }, { goal_id: goalId }] },
  });
  funnelId = funnel.body.data.funnel.id;
  const conversation = await call('POST', '/api/conversations', { token: user.token, body: { title: 'T' } });
  conversationId = conversation.body.data.id;
  const invite = await call('POST', `/api/teams/${user.teamId}/invites`, {
    token: user.token,
    body: { email: 'invited-unstorable@example.com' },
  });
  inviteToken = invite.body.data.token;
  const login = await call('POST', '/api/auth/login', { body: { email: user.email, password: 'password-123' } });
  sessionCookie =
    login.headers
      .getSetCookie()
      .find((c) => c.startsWith('tidemark_session='))
      ?.split(';')[0] ?? '';
});
afterAll(() => ctx.close());

type Auth = 'jwt' | 'key' | 'session' | 'none';
interface Field {
  /** The field as the error message names it. */
  field: string;
  method: 'POST' | 'PUT' | 'PATCH';
  path: () => string;
  auth: Auth;
  /** The request body with `bad` in the field under test (the other fields valid). */
  body: (bad: string) => unknown;
  /** Where the error envelope differs (the Plausible-compatible API answers `{error, code}`). */
  plausible?: true;
  /** A route's own 400 code where it has one; VALIDATION_ERROR otherwise. */
  code?: string;
}

const websites = () => `/api/websites/${site}`;
const FIELDS: Field[] = [
  {
    field: 'email',
    method: 'POST',
    path: () => '/api/auth/register',
    auth: 'none',
    body: (bad) => ({ email: `a${bad}@example.com`, password: 'password-123' }),
  },
  {
    field: 'full_name',
    method: 'POST',
    path: () => '/api/auth/register',
    auth: 'none',
    body: (bad) => ({ email: 'nobody-new@example.com', password: 'password-123', full_name: `A${bad}` }),
  },
  {
    field: 'email',
    method: 'POST',
    path: () => '/api/auth/login',
    auth: 'none',
    body: (bad) => ({ email: `a${bad}@example.com`, password: 'password-123' }),
  },
  {
    field: 'full_name',
    method: 'PUT',
    path: () => '/api/users/me',
    auth: 'jwt',
    body: (bad) => ({ full_name: `A${bad}` }),
  },
  {
    field: 'avatar_url',
    method: 'PUT',
    path: () => '/api/users/me',
    auth: 'jwt',
    body: (bad) => ({ avatar_url: `https://example.com/${bad}` }),
  },
  {
    field: 'name',
    method: 'POST',
    path: () => '/api/websites',
    auth: 'jwt',
    body: (bad) => ({ domain: 'x.example.com', name: `S${bad}` }),
  },
  {
    field: 'domain',
    method: 'POST',
    path: () => '/api/websites',
    auth: 'jwt',
    body: (bad) => ({ domain: `x${bad}.example.com`, name: 'S' }),
  },
  {
    field: 'timezone',
    method: 'POST',
    path: () => '/api/websites',
    auth: 'jwt',
    body: (bad) => ({ domain: 'x.example.com', name: 'S', timezone: `Europe/Berlin${bad}` }),
  },
  {
    field: 'name',
    method: 'PUT',
    path: () => `${websites()}/general`,
    auth: 'jwt',
    body: (bad) => ({ name: `S${bad}` }),
  },
  {
    field: 'allowed_domains.0',
    method: 'PUT',
    path: () => `${websites()}/general`,
    auth: 'jwt',
    body: (bad) => ({ allowed_domains: [`a${bad}.com`] }),
  },
  {
    field: 'name',
    method: 'POST',
    path: () => '/api/external/v1/websites',
    auth: 'key',
    body: (bad) => ({ domain: 'y.example.com', name: `S${bad}` }),
  },
  {
    field: 'name',
    method: 'POST',
    path: () => `/api/teams/${user.teamId}/api-keys`,
    auth: 'jwt',
    body: (bad) => ({ name: `K${bad}`, permission: 'full_access' }),
  },
  {
    field: 'name',
    method: 'POST',
    path: () => `${websites()}/goals`,
    auth: 'jwt',
    body: (bad) => ({ name: `G${bad}` }),
  },
  {
    field: 'path',
    method: 'POST',
    path: () => `${websites()}/goals`,
    auth: 'jwt',
    body: (bad) => ({ kind: 'page', path: `/p${bad}` }),
  },
  {
    field: 'name',
    method: 'PUT',
    path: () => `${websites()}/goals/${goalId}`,
    auth: 'jwt',
    body: (bad) => ({ name: `G${bad}` }),
  },
  {
    field: 'name',
    method: 'POST',
    path: () => `${websites()}/funnels`,
    auth: 'jwt',
    body: (bad) => ({ name: `F${bad}`, steps: [{ path: '/a' }, { path: '/b' }] }),
  },
  {
    field: 'steps.0.path',
    code: 'INVALID_FUNNEL_STEPS',
    method: 'POST',
    path: () => `${websites()}/funnels`,
    auth: 'jwt',
    body: (bad) => ({ name: 'F', steps: [{ path: `/a${bad}` }, { path: '/b' }] }),
  },
  {
    field: 'name',
    method: 'PUT',
    path: () => `${websites()}/funnels/${funnelId}`,
    auth: 'jwt',
    body: (bad) => ({ name: `F${bad}` }),
  },
  {
    field: 'ip_address',
    method: 'POST',
    path: () => `${websites()}/exclusions/ip`,
    auth: 'jwt',
    body: (bad) => ({ ip_address: `10.0.0.1${bad}` }),
  },
  {
    field: 'description',
    method: 'POST',
    path: () => `${websites()}/exclusions/ip`,
    auth: 'jwt',
    body: (bad) => ({ ip_address: '10.0.0.1', description: `D${bad}` }),
  },
  {
    field: 'path_pattern',
    method: 'POST',
    path: () => `${websites()}/exclusions/path`,
    auth: 'jwt',
    body: (bad) => ({ path_pattern: `/x${bad}` }),
  },
  {
    field: 'description',
    method: 'POST',
    path: () => `${websites()}/exclusions/path`,
    auth: 'jwt',
    body: (bad) => ({ path_pattern: '/x', description: `D${bad}` }),
  },
  {
    field: 'report_recipients.0',
    method: 'PUT',
    path: () => `${websites()}/notifications`,
    auth: 'jwt',
    body: (bad) => ({ report_recipients: [`a${bad}@example.com`] }),
  },
  {
    field: 'slack_webhook_url',
    method: 'PUT',
    path: () => `${websites()}/notifications`,
    auth: 'jwt',
    body: (bad) => ({ slack_webhook_url: `https://hooks.example.com/a${bad}` }),
  },
  {
    field: 'revenue_currency',
    method: 'PUT',
    path: () => `${websites()}/revenue`,
    auth: 'jwt',
    body: (bad) => ({ revenue_currency: `USD${bad}` }),
  },
  {
    field: 'domain',
    method: 'PUT',
    path: () => `${websites()}/domains`,
    auth: 'jwt',
    body: (bad) => ({ domain: `z${bad}.example.com` }),
  },
  {
    field: 'allowed_domains.0',
    method: 'PUT',
    path: () => `${websites()}/domains`,
    auth: 'jwt',
    body: (bad) => ({ allowed_domains: [`z${bad}.example.com`] }),
  },
  {
    field: 'email',
    method: 'POST',
    path: () => `${websites()}/team-members`,
    auth: 'jwt',
    body: (bad) => ({ email: `m${bad}@example.com` }),
  },
  {
    field: 'email',
    method: 'POST',
    path: () => `/api/teams/${user.teamId}/invites`,
    auth: 'jwt',
    body: (bad) => ({ email: `i${bad}@example.com` }),
  },
  {
    field: 'full_name',
    method: 'POST',
    path: () => `/api/invites/${inviteToken}/accept`,
    auth: 'none',
    body: (bad) => ({ password: 'password-123', full_name: `A${bad}` }),
  },
  {
    field: 'title',
    method: 'POST',
    path: () => '/api/conversations',
    auth: 'jwt',
    body: (bad) => ({ title: `T${bad}` }),
  },
  {
    field: 'title',
    method: 'PUT',
    path: () => `/api/conversations/${conversationId}`,
    auth: 'jwt',
    body: (bad) => ({ title: `T${bad}` }),
  },
  {
    field: 'messages.0.content',
    method: 'PUT',
    path: () => `/api/conversations/${conversationId}`,
    auth: 'jwt',
    body: (bad) => ({ messages: [{ role: 'user', content: `C${bad}` }] }),
  },
  {
    field: 'content',
    method: 'POST',
    path: () => `/api/conversations/${conversationId}/messages`,
    auth: 'jwt',
    body: (bad) => ({ role: 'user', content: `C${bad}` }),
  },
  {
    field: 'question',
    method: 'POST',
    path: () => `/api/conversations/${conversationId}/ask`,
    auth: 'jwt',
    body: (bad) => ({ question: `visitors${bad}`, website_id: site }),
  },
  {
    field: 'role',
    method: 'POST',
    path: () => `/api/conversations/${conversationId}/messages`,
    auth: 'jwt',
    body: (bad) => ({ role: `user${bad}`, content: 'C' }),
  },
  {
    field: 'data',
    method: 'POST',
    path: () => '/api/onboarding/progress',
    auth: 'jwt',
    body: (bad) => ({ data: { note: `N${bad}` } }),
  },
  {
    field: 'trackingCode',
    method: 'POST',
    path: () => '/api/v1/events',
    auth: 'key',
    body: (bad) => ({ trackingCode: `c${bad}`, events: [{}] }),
  },
  {
    field: 'site_id',
    method: 'POST',
    path: () => '/api/v2/query',
    auth: 'key',
    plausible: true,
    code: 'INVALID_QUERY',
    body: (bad) => ({ site_id: `s${bad}.example.com`, metrics: ['visitors'], date_range: '7d' }),
  },
  {
    field: 'timezone',
    method: 'PUT',
    path: () => `${websites()}/general`,
    auth: 'jwt',
    body: (bad) => ({ timezone: `UTC${bad}` }),
  },
  {
    field: 'path',
    method: 'PUT',
    path: () => `${websites()}/goals/${goalId}`,
    auth: 'jwt',
    body: (bad) => ({ path: `/p${bad}` }),
  },
  {
    field: 'steps.0.path',
    method: 'PUT',
    path: () => `${websites()}/funnels/${funnelId}`,
    auth: 'jwt',
    code: 'INVALID_FUNNEL_STEPS',
    body: (bad) => ({ steps: [{ path: `/a${bad}` }, { path: '/b' }] }),
  },
  {
    field: 'messages.0.role',
    method: 'PUT',
    path: () => `/api/conversations/${conversationId}`,
    auth: 'jwt',
    body: (bad) => ({ messages: [{ role: `user${bad}`, content: 'C' }] }),
  },
  {
    field: 'domain',
    method: 'PUT',
    path: () => `${websites()}/general`,
    auth: 'jwt',
    body: (bad) => ({ domain: `g${bad}.example.com` }),
  },
  {
    field: 'domain',
    method: 'POST',
    path: () => '/api/external/v1/websites',
    auth: 'key',
    body: (bad) => ({ domain: `e${bad}.example.com`, name: 'S' }),
  },
  {
    field: 'message',
    method: 'POST',
    path: () => '/api/annotations',
    auth: 'session',
    body: (bad) => ({ websiteId: site, type: 'deploy', message: `M${bad}` }),
  },
  {
    field: 'metadata',
    method: 'POST',
    path: () => '/api/annotations',
    auth: 'session',
    body: (bad) => ({ websiteId: site, type: 'deploy', message: 'M', metadata: { [`k${bad}`]: 'v' } }),
  },
  {
    field: 'metadata',
    method: 'POST',
    path: () => '/api/annotations',
    auth: 'session',
    body: (bad) => ({ websiteId: site, type: 'deploy', message: 'M', metadata: { nested: [`v${bad}`] } }),
  },
  ...(['url', 'secret', 'event_names.0'] as const).map(
    (field): Field => ({
      field,
      method: 'POST',
      path: () => `${websites()}/webhooks`,
      auth: 'jwt',
      body: (bad) => ({
        url: field === 'url' ? `https://hooks.example.com/${bad}` : 'https://hooks.example.com/in',
        events: ['event.tracked'],
        ...(field === 'secret' ? { secret: `secret-0123456789-${bad}` } : {}),
        ...(field === 'event_names.0' ? { event_names: [`n${bad}`] } : {}),
      }),
    }),
  ),
  // The body is judged before the webhook is looked up: any id will do.
  ...(['PUT', 'PATCH'] as const).flatMap((method) =>
    (['url', 'event_names.0'] as const).map(
      (field): Field => ({
        field,
        method,
        path: () => `${websites()}/webhooks/00000000-0000-4000-8000-000000000000`,
        auth: 'jwt',
        body: (bad) => (field === 'url' ? { url: `https://hooks.example.com/${bad}` } : { event_names: [`n${bad}`] }),
      }),
    ),
  ),
];

const UNSTORABLE: [string, string][] = [
  ['a NUL character', '\u0000'],
  ['a lone surrogate', '\ud800'],
];

describe.each(UNSTORABLE)('%s', (_what, bad) => {
  it.each(FIELDS.map((f, i) => [`#${i} ${f.method} ${f.field}`, f] as const))(
    '%s: 400 naming the field, never a 500',
    async (_name, f) => {
      const auth = {
        jwt: { token: user.token },
        key: { token: apiKey },
        session: { headers: { cookie: sessionCookie } },
        none: {},
      }[f.auth];
      const res = await call(f.method, f.path(), { ...auth, body: f.body(bad) });
      const error = f.plausible ? res.body : res.body.error;
      const message = f.plausible ? error?.error : error?.message;
      expect({ status: res.status, code: error?.code, message }).toEqual({
        status: 400,
        code: f.code ?? 'VALIDATION_ERROR',
        message: expect.stringContaining(`${f.field}: `),
      });
    },
  );
});

/** String fields of request bodies that never reach PostgreSQL as given, and why. */
const EXEMPT: [RegExp, string][] = [
  [/ (password|current_password|new_password)$/, 'only its hash is stored'],
  [/ primary_color$/, 'hex digits: its pattern refuses anything else'],
  [
    /^POST \/api\/external\/v1\/query\/\{websiteId\} question$/,
    'read by the interpreter or sent to the model, never stored',
  ],
  [/^POST \/api\/v2\/query (metrics\.0|dimensions\.0|date_range|date)$/, 'matched against fixed names and dates'],
  [
    /^POST (\/api\/v1\/events (events|serverContext)\.|\/api\/events\/|\/api\/track\/|\/e\/)/,
    'event data: ingestion strips what PostgreSQL cannot store (lib/ingest/job/sanitize.ts) instead of refusing it',
  ],
];

type Schema = Record<string, unknown>;
const doc = openApiDocument('http://localhost') as unknown as {
  paths: Record<string, Record<string, Schema>>;
  components: { schemas: Record<string, Schema> };
};
const resolve = (s: Schema): Schema =>
  typeof s.$ref === 'string' ? resolve(doc.components.schemas[s.$ref.split('/').pop() ?? '']) : s;

/** A string that can only be one of a few values, a UUID or a timestamp. */
const notFree = (s: Schema) =>
  s.enum !== undefined || ['uuid', 'date-time'].includes(String(s.format)) || s.pattern === UUID.source;

/** Paths (`a.0.b`) of the free-form strings in a request body schema. */
function stringFields(schema: Schema, path: string[] = []): string[] {
  const s = resolve(schema);
  const found: string[] = [];
  for (const k of ['anyOf', 'oneOf', 'allOf'])
    for (const sub of (s[k] as Schema[]) ?? []) found.push(...stringFields(sub, path));
  const types = ([] as unknown[]).concat(s.type ?? []);
  if (types.includes('string') && !notFree(s)) found.push(path.join('.'));
  for (const [k, v] of Object.entries((s.properties as Record<string, Schema>) ?? {}))
    found.push(...stringFields(v, [...path, k]));
  if (s.items) found.push(...stringFields(s.items as Schema, [...path, '0']));
  if (typeof s.additionalProperties === 'object')
    found.push(...stringFields(s.additionalProperties as Schema, [...path, '*']));
  return found;
}

test('every string field of a documented request body has a row above or a reason to be exempt', () => {
  const template = (path: string) =>
    Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
  const covered = new Set(FIELDS.map((f) => `${f.method} ${template(f.path())} ${f.field}`));
  const missing: string[] = [];
  for (const [t, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = (operation.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      const schema = content?.['application/json']?.schema;
      if (!schema) continue;
      for (const field of new Set(stringFields(schema))) {
        const name = `${method.toUpperCase()} ${t} ${field}`;
        if (!covered.has(name) && !EXEMPT.some(([re]) => re.test(name))) missing.push(name);
      }
    }
  }
  expect(missing).toEqual([]);
});
