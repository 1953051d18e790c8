import { trackingSnippet } from '../../lib/accounts/snippet';
import { getWebsite } from '../../lib/accounts/websites';
import { type Context, requireUuid, UsageError, type Values } from '../context';

export async function runSnippet(v: Values, ctx: Context): Promise<void> {
  const id = requireUuid(v.website, '--website', 'website');
  const website = await getWebsite(await ctx.pool(), id);
  if (!website) throw new UsageError(`no website ${id}`);
  const snippet = trackingSnippet(ctx.config.PUBLIC_URL, website, {
    persist: v.persist === true ? 'true' : undefined,
    allow_localhost: v['allow-localhost'] === true ? 'true' : undefined,
  });
  ctx.io.out(v.json === true ? JSON.stringify(snippet) : snippet.script);
}
