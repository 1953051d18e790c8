import { createAnnotationBody } from '../../lib/accounts/annotationSchemas';
import { printRows, requireUuid, UsageError, type Values } from '../context';
import { type RemoteContext, refusal, request, type Target, target } from '../remote';

// The body field each flag fills, for usage errors that name the flag.
const FLAGS: Record<string, string> = {
  websiteId: '--site-id',
  type: '--type',
  message: '--message',
  occurredAt: '--occurred-at',
  metadata: '--metadata',
};

function siteId(v: Values, t: Target): string {
  if (v['site-id'] !== undefined) return requireUuid(v['site-id'], '--site-id', 'website');
  if (t.siteId) return t.siteId;
  throw new UsageError('no website: pass --site-id, set TIDEMARK_SITE_ID, or save one with tidemark login --site-id');
}

function optionalString(v: Values, flag: string): string | undefined {
  const value = v[flag];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${flag} needs a value`);
  return value;
}

export async function runAnnotationsCreate(v: Values, ctx: RemoteContext): Promise<void> {
  const t = target(ctx);
  let metadata: unknown;
  const rawMetadata = optionalString(v, 'metadata');
  if (rawMetadata !== undefined) {
    try {
      metadata = JSON.parse(rawMetadata);
    } catch {
      throw new UsageError('--metadata must be a JSON object, such as \'{"commit":"abc123"}\'');
    }
  }
  const parsed = createAnnotationBody.safeParse({
    websiteId: siteId(v, t),
    type: v.type,
    message: v.message,
    occurredAt: optionalString(v, 'occurred-at'),
    metadata,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = FLAGS[String(issue.path[0])] ?? String(issue.path[0]);
    throw new UsageError(
      v[flag.slice(2)] === undefined && flag !== '--site-id' ? `${flag} is required` : `${flag} ${issue.message}`,
    );
  }
  const answer = await request(t.url, 'POST', '/api/annotations', { session: t.session, body: parsed.data });
  if (answer.status !== 201) throw refusal(answer, t);
  const a = answer.body.data.annotation;
  ctx.io.out(
    v.json === true ? JSON.stringify(a) : `created ${a.type} annotation ${a.id} on ${a.website_id} at ${a.occurred_at}`,
  );
}

export async function runAnnotationsList(v: Values, ctx: RemoteContext): Promise<void> {
  const t = target(ctx);
  const query = new URLSearchParams({ websiteId: siteId(v, t) });
  for (const flag of ['from', 'to']) {
    const value = optionalString(v, flag);
    if (value !== undefined) query.set(flag, value);
  }
  const answer = await request(t.url, 'GET', `/api/annotations?${query}`, { session: t.session });
  if (answer.status !== 200) throw refusal(answer, t);
  printRows(ctx.io, answer.body.data.annotations, v.json === true, ['id', 'occurred_at', 'type', 'message']);
}

export async function runAnnotationsDelete(v: Values, ctx: RemoteContext): Promise<void> {
  const t = target(ctx);
  const id = requireUuid(v.id, '--id', 'annotation');
  const answer = await request(t.url, 'DELETE', `/api/annotations/${id}`, { session: t.session });
  if (answer.status !== 200) throw refusal(answer, t);
  ctx.io.out(v.json === true ? JSON.stringify({ deleted: true, id }) : `deleted annotation ${id}`);
}
