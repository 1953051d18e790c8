// /api/users/me: the caller's profile, password, and deleting the account.
import { Router } from 'express';
import { deleteAccount } from '../../lib/accounts/deleteAccount';
import type { DeletedView, PasswordChangedView } from '../../lib/accounts/responses';
import { changePasswordBody, deleteAccountBody, updateProfileBody } from '../../lib/accounts/schemas';
import { changePassword, getUser, publicUser, updateProfile } from '../../lib/accounts/users';
import { createLoginThrottle } from '../../lib/auth/throttle';
import { JWT_TTL_SECONDS, SESSION_COOKIE, sha256Hex, signJwt } from '../../lib/auth/tokens';
import { notFound } from '../../lib/errors';
import type { AppDeps } from '../deps';
import { requireJwt, userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody } from '../middleware/validate';
import { clearSessionCookies } from './signIn';

export function userRoutes({ pool, config, clickhouse, ingest, redis }: AppDeps): Router {
  const router = Router();
  // Wrong current passwords count with the sign-in failures (lib/auth/throttle.ts).
  const throttle = createLoginThrottle(redis, config.REDIS_PREFIX, config.JWT_SECRET);
  router.use(requireJwt(config.JWT_SECRET, pool));

  router.get('/me', async (_req, res) => {
    const user = await getUser(pool, userId(res));
    if (!user) throw notFound('User not found');
    sendData(res, publicUser(user));
  });

  router.put('/me', async (req, res) => {
    const body = parseBody(updateProfileBody, req);
    sendData(res, publicUser(await updateProfile(pool, userId(res), body)));
  });

  router.put('/me/password', async (req, res) => {
    const body = parseBody(changePasswordBody, req);
    const cookie = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
    // Every earlier JWT (this one too) is revoked and other sessions end; the caller gets a fresh token.
    const version = await changePassword(
      pool,
      throttle,
      userId(res),
      body.current_password,
      body.new_password,
      cookie && sha256Hex(cookie),
    );
    sendData(res, {
      updated: true,
      token: signJwt(config.JWT_SECRET, userId(res), version),
      expires_in: JWT_TTL_SECONDS,
    } satisfies PasswordChangedView);
  });

  router.delete('/me', async (req, res) => {
    const body = parseBody(deleteAccountBody, req);
    const deleted = await deleteAccount(pool, clickhouse, throttle, userId(res), body.password);
    for (const code of deleted.trackingCodes) ingest.sites.invalidate(code);
    clearSessionCookies(res, config.PUBLIC_URL);
    sendData(res, { deleted: true } satisfies DeletedView);
  });

  return router;
}
