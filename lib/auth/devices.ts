// Known devices: a browser that once signed in to an account carries a signed cookie naming that user and a
// random device id. At a later sign-in for the same user it is exempt from the email's shared back-off
// (lib/auth/throttle.ts), so a spray against the email cannot keep the owner out.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { UUID } from '../checks';

export const DEVICE_COOKIE = 'tidemark_device';
export const DEVICE_TTL_MS = 365 * 24 * 3600 * 1000;

const DEVICE_ID = /^[A-Za-z0-9_-]{22}$/;

export interface DeviceClaim {
  userId: string;
  deviceId: string;
}

function mac(secret: string, userId: string, deviceId: string): Buffer {
  return createHmac('sha256', secret).update(`known-device\0${userId.toLowerCase()}\0${deviceId}`).digest();
}

/** The cookie value `<user id>.<device id>.<HMAC>`; a new random device id unless one is given. */
export function deviceCookieValue(
  secret: string,
  userId: string,
  deviceId = randomBytes(16).toString('base64url'),
): string {
  return `${userId}.${deviceId}.${mac(secret, userId, deviceId).toString('base64url')}`;
}

/** The claim of a cookie we signed, or undefined for anything else (checked in constant time). */
export function verifyDeviceCookie(secret: string, value: string | undefined): DeviceClaim | undefined {
  if (typeof value !== 'string') return undefined;
  const [userId, deviceId, signature, ...rest] = value.split('.');
  if (rest.length || !UUID.test(userId ?? '') || !DEVICE_ID.test(deviceId ?? '') || !signature) return undefined;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, userId, deviceId);
  return given.length === expected.length && timingSafeEqual(given, expected) ? { userId, deviceId } : undefined;
}
