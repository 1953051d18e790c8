// /api/auth: register, login, logout, and JWT renewal from the session cookie (DESIGN §3 "Accounts").
import { type Request, Router } from 'express';
import type { LoggedOutView, SetupView, TokenView } from '../../lib/accounts/responses';
import { loginBody, registerBody } from '../../lib/accounts/schemas';
import { authenticateUser, createUser, getUser, instanceHasOwner } from '../../lib/accounts/users';
import { DEVICE_COOKIE, verifyDeviceCookie } from '../../lib/auth/devices';
import { createLoginThrottle } from '../../lib/auth/throttle';
import {
  deleteSession,
  JWT_TTL_SECONDS,
  revokeTokens,
  SESSION_COOKIE,
  sessionUser,
  signJwt,
} from '../../lib/auth/tokens';
import { takeAttempt, windowKeys } from '../../lib/auth/windows';
import { forbidden, orUnavailable, rateLimited, unauthorized } from '../../lib/errors';
import type { AppDeps } from '../deps';
import { jwtUser, requireSession } from '../middleware/auth';
import { sameOriginWrites } from '../middleware/csrf';
import { sendData } from '../middleware/envelope';
import { parseBody } from '../middleware/validate';
import { clearSessionCookies, signInResponder } from './signIn';

/** Sign-up limits (SIGNUP_LIMIT_PER_CLIENT, SIGNUP_LIMIT_TOTAL) count per this window. */
export const SIGNUP_WINDOW_SECONDS = 10 * 60;

export function authRoutes(deps: AppDeps): Router {
  const { pool, config } = deps;
  const router = Router();
  // Every route here sets or spends the session cookie: a cross-site form cannot sign someone in to another
  // account (login CSRF), out, or mint a JWT from their session (DESIGN §5).
  router.use(sameOriginWrites(config.PUBLIC_URL));
  const throttle = createLoginThrottle(deps.redis, config.REDIS_PREFIX, config.JWT_SECRET);
  const signupKey = windowKeys(config.REDIS_PREFIX, config.JWT_SECRET, 'signup');
  const signIn = signInResponder(deps);

  const cookies = (req: Request) => (req.cookies as Record<string, string> | undefined) ?? {};

  /** The device id when the request carries a known-device cookie we issued to the account of `email`. */
  async function knownDevice(req: Request, email: string): Promise<string | undefined> {
    const claim = verifyDeviceCookie(config.JWT_SECRET, cookies(req)[DEVICE_COOKIE]);
    if (!claim) return undefined;
    const owner = await getUser(pool, claim.userId);
    return owner && owner.email.toLowerCase() === email.toLowerCase() ? claim.deviceId : undefined;
  }

  router.get('/setup', async (_req, res) => {
    sendData(res, {
      owner_exists: await instanceHasOwner(pool),
      signup_open: config.ALLOW_SIGNUP,
    } satisfies SetupView);
  });

  router.post('/register', async (req, res) => {
    if (!config.ALLOW_SIGNUP) throw forbidden('Sign-up is disabled on this server');
    const body = parseBody(registerBody, req);
    // Per client address and in total, so a script cannot mint accounts (or probe emails through 409s).
    const wait = await orUnavailable(
      takeAttempt(deps.redis, [
        { key: signupKey.client('ip', req.ip), limit: config.SIGNUP_LIMIT_PER_CLIENT, seconds: SIGNUP_WINDOW_SECONDS },
        { key: signupKey('all'), limit: config.SIGNUP_LIMIT_TOTAL, seconds: SIGNUP_WINDOW_SECONDS },
      ]),
    );
    if (wait > 0) throw rateLimited('Too many sign-ups; try again later', wait);
    const { user } = await createUser(pool, body, { plan: config.DEFAULT_PLAN, owner: 'first' });
    await signIn(res, user, 201);
  });

  router.post('/login', async (req: Request, res) => {
    const body = parseBody(loginBody, req);
    const device = await knownDevice(req, body.email);
    await orUnavailable(throttle.attempt(body.email, req.ip, device));
    const user = await authenticateUser(pool, body.email, body.password);
    await throttle.succeed(body.email, req.ip, device).catch(() => undefined);
    await signIn(res, user, 200, device);
  });

  // Ends this session and revokes every JWT of its user (the cookie's and the Bearer token's, when given). A
  // token that is already revoked revokes nothing, so an old token cannot keep signing its user out.
  router.post('/logout', async (req, res) => {
    const token = cookies(req)[SESSION_COOKIE];
    const users = new Set<string>();
    if (token) {
      const sessionOwner = await sessionUser(pool, token);
      if (sessionOwner) users.add(sessionOwner);
      await deleteSession(pool, token);
    }
    const bearerUser = await jwtUser(config.JWT_SECRET, pool, req);
    if (bearerUser) users.add(bearerUser);
    for (const id of users) await revokeTokens(pool, id);
    clearSessionCookies(res, config.PUBLIC_URL);
    sendData(res, { logged_out: true } satisfies LoggedOutView);
  });

  router.post('/token', requireSession(pool), async (_req, res) => {
    const user = await getUser(pool, res.locals.userId as string);
    if (!user) throw unauthorized('Session user no longer exists');
    sendData(res, {
      token: signJwt(config.JWT_SECRET, user.id, user.token_version),
      expires_in: JWT_TTL_SECONDS,
    } satisfies TokenView);
  });

  return router;
}
