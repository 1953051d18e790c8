// An API key records when it was last used (the settings list shows it): unset until the first request,
// set by an accepted one, rewritten at most once a minute so a busy key does not write on every request,
// and never by a refused (revoked) key.
import { createApiKey, registerUser, type TestUser } from '../../helpers/accounts';
import { createTestContext, type TestContext } from '../../helpers/context';
import { client } from '../../helpers/http';

let ctx: TestContext;
let owner: TestUser;

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await registerUser(ctx, 'pro', 'owner');
});
afterAll(() => ctx.close());

const lastUsed = async (id: string): Promise<Date | null> =>
  (await ctx.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [id])).rows[0].last_used_at;

it('sets last_used_at on use, at most once a minute, and shows it in the list', async () => {
  const call = client(ctx.baseUrl);
  const { id, key } = await createApiKey(ctx, owner);
  expect(await lastUsed(id)).toBeNull();

  expect((await call('GET', '/api/external/v1/websites', { apiKey: key })).status).toBe(200);
  const first = await lastUsed(id);
  expect(first).toBeInstanceOf(Date);
  expect(Math.abs(Date.now() - first!.getTime())).toBeLessThan(60_000);

  expect((await call('GET', '/api/external/v1/websites', { apiKey: key })).status).toBe(200);
  expect(await lastUsed(id)).toEqual(first);

  // An hour-old mark is stale: the next request renews it.
  await ctx.pool.query(`UPDATE api_keys SET last_used_at = now() - interval '1 hour' WHERE id = $1`, [id]);
  expect((await call('GET', '/api/external/v1/websites', { apiKey: key })).status).toBe(200);
  expect(Date.now() - (await lastUsed(id))!.getTime()).toBeLessThan(60_000);

  const listed = await call('GET', `/api/teams/${owner.teamId}/api-keys`, { token: owner.token });
  const row = listed.body.data.api_keys.find((k: { id: string }) => k.id === id);
  expect(new Date(row.last_used_at).getTime()).toBe((await lastUsed(id))!.getTime());

  // A revoked key is refused before anything is recorded.
  await ctx.pool.query(`UPDATE api_keys SET last_used_at = NULL, revoked_at = now() WHERE id = $1`, [id]);
  expect((await call('GET', '/api/external/v1/websites', { apiKey: key })).status).toBe(401);
  expect(await lastUsed(id)).toBeNull();
});
