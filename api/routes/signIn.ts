// Signing a user in: the session and known-device cookies, and the JWT with the user and default team. Shared
// by login, registration and accepting an invite as a new user.
import type { CookieOptions, Response } from 'express';
import type { InviteAcceptedView, SignInView } from '../../lib/accounts/responses';
import { getTeam } from '../../lib/accounts/teams';
import { publicUser, type UserRow } from '../../lib/accounts/users';
import { DEVICE_COOKIE, DEVICE_TTL_MS, deviceCookieValue } from '../../lib/auth/devices';
import { createSession, SESSION_COOKIE, SESSION_TTL_MS, signJwt } from '../../lib/auth/tokens';
import type { AppDeps } from '../deps';
import { sendData } from '../middleware/envelope';

export function sessionCookieOptions(publicUrl: string): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure: publicUrl.startsWith('https:'), path: '/' };
}

/**
 * A readable companion of the (HttpOnly) session cookie, holding nothing secret: the dashboard asks for a JWT
 * on load only when it is there, so a signed-out visit makes no request that must fail.
 */
export const SIGNED_IN_COOKIE = 'tm_signed_in';

export function clearSessionCookies(res: Response, publicUrl: string): void {
  const options = sessionCookieOptions(publicUrl);
  res.clearCookie(SESSION_COOKIE, options);
  res.clearCookie(SIGNED_IN_COOKIE, { ...options, httpOnly: false });
}

/**
 * `device`: the id this browser already holds for the user, kept; otherwise a new one (the browser has now
 * proven itself for this account). `extra` fields are added to the response body.
 */
export function signInResponder({ pool, config }: Pick<AppDeps, 'pool' | 'config'>) {
  const cookieOptions = sessionCookieOptions(config.PUBLIC_URL);
  return async (
    res: Response,
    user: UserRow,
    status: number,
    device?: string,
    extra: Partial<InviteAcceptedView> = {},
  ) => {
    const session = await createSession(pool, user.id);
    res.cookie(SESSION_COOKIE, session.token, { ...cookieOptions, maxAge: SESSION_TTL_MS });
    res.cookie(SIGNED_IN_COOKIE, '1', { ...cookieOptions, httpOnly: false, maxAge: SESSION_TTL_MS });
    res.cookie(DEVICE_COOKIE, deviceCookieValue(config.JWT_SECRET, user.id, device), {
      ...cookieOptions,
      path: '/api/auth',
      maxAge: DEVICE_TTL_MS,
    });
    const team = user.default_team_id ? await getTeam(pool, user.default_team_id) : undefined;
    sendData(
      res,
      {
        user: publicUser(user),
        team: team && { id: team.id, name: team.name, plan: team.plan },
        token: signJwt(config.JWT_SECRET, user.id, user.token_version),
        ...extra,
      } satisfies SignInView,
      status,
    );
  };
}
