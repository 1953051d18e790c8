// Per-event checks of server ingestion, in DESIGN §3's order; the first failure wins.

import { UUID } from '../../checks';
import type { z } from '../../zod';
import {
  CONSENT_VALUES,
  EVENT_TYPES,
  MAX_PROPS_BYTES,
  MAX_PROPS_DEPTH,
  PAYMENT_PROVIDERS,
  PROPS_SCHEMAS,
  type RejectionReason,
  type ServerEventType,
  TS_SKEW_MS,
} from './serverSchemas';

export interface ValidEvent {
  type: ServerEventType;
  ts: number;
  sessionId: string;
  visitorId: string;
  idempotencyKey?: string;
  /** The checked props of the type (with defaults applied). */
  props: Record<string, unknown>;
  /** Every other prop, kept as custom properties. */
  custom: Record<string, unknown>;
}

export type Verdict = { ok: true; event: ValidEvent } | { ok: false; reason: RejectionReason; message: string };

export interface ValidationContext {
  now: number;
  /** Names of the website's active goals. */
  activeGoals: ReadonlySet<string>;
}

// 8-4-4-4-12 hex, any version and case, but not the nil UUID (DESIGN §3).
const NIL = /^0{8}-0{4}-0{4}-0{4}-0{12}$/;
export const isUuidShaped = (v: unknown): v is string => typeof v === 'string' && UUID.test(v) && !NIL.test(v);

const NEEDS_VISITOR: ReadonlySet<ServerEventType> = new Set(['pageview', 'identify', 'goal']);
const NEEDS_SESSION: ReadonlySet<ServerEventType> = new Set(['pageview', 'goal']);
const MAX_ID = 256;

const reject = (reason: RejectionReason, message: string): Verdict => ({ ok: false, reason, message });

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks an id field: required ones must be present; pageview ids must be UUID-shaped. */
function checkId(
  value: unknown,
  field: string,
  required: boolean,
  uuid: boolean,
): string | { message: string } | undefined {
  if (value === undefined || value === null || value === '') {
    return required ? { message: `${field} is required for this event type` } : undefined;
  }
  if (typeof value !== 'string' || value.length > MAX_ID)
    return { message: `${field} must be a string of at most ${MAX_ID} characters` };
  if (uuid && !isUuidShaped(value)) return { message: `${field} must be a UUID for pageview events` };
  return value;
}

/**
 * An upper bound of JSON.stringify(props).length without serialising: every UTF-16 unit of a key or string
 * becomes at most a 6-character escape, a number at most 24 characters. Props are almost always flat and
 * far below the limit, so the exact length is only computed when this bound exceeds it (Infinity for
 * nested or unusual values).
 */
function jsonLengthBound(props: Record<string, unknown>): number {
  let n = 2;
  for (const k in props) {
    const v = props[k];
    n += 6 * k.length + 4; // quotes, colon, comma
    if (typeof v === 'string') n += 6 * v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) n += 24;
    else return Infinity;
  }
  return n;
}

/** Whether props nest deeper than MAX_PROPS_DEPTH; iterative, as a body may nest thousands of levels. */
function nestsTooDeep(props: Record<string, unknown>): boolean {
  const pending: [object, number][] = [[props, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, depth] = next;
    if (depth > MAX_PROPS_DEPTH) return true;
    for (const v of Object.values(value)) if (typeof v === 'object' && v !== null) pending.push([v, depth + 1]);
  }
  return false;
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.length ? `props.${issue.path.join('.')}` : 'props';
  return `${path} ${issue.message}`;
}

export function validateServerEvent(raw: unknown, ctx: ValidationContext): Verdict {
  if (!isPlainObject(raw) || typeof raw.type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(raw.type)) {
    return reject('invalid_event_type', `type must be one of ${EVENT_TYPES.join(', ')}`);
  }
  const type = raw.type as ServerEventType;

  if (raw.consent !== undefined && !(CONSENT_VALUES as readonly unknown[]).includes(raw.consent)) {
    return reject('invalid_consent', `consent must be one of ${CONSENT_VALUES.join(', ')}`);
  }
  if (raw.consent === 'opt-out') return reject('consent_opted_out', 'the event carries consent opt-out');

  const ts = raw.ts;
  if (typeof ts !== 'number' || !Number.isFinite(ts))
    return reject('invalid_ts', 'ts must be a number of Unix milliseconds');
  if (Math.abs(ts - ctx.now) > TS_SKEW_MS) return reject('invalid_ts', 'ts must be within 24 hours of server time');

  let idempotencyKey: string | undefined;
  if (raw.idempotencyKey !== undefined) {
    if (typeof raw.idempotencyKey !== 'string' || raw.idempotencyKey.length < 1 || raw.idempotencyKey.length > 128) {
      return reject('invalid_idempotency_key', 'idempotencyKey must be a string of 1 to 128 characters');
    }
    // Redis stores keys as UTF-8, where every lone surrogate becomes U+FFFD: two such keys would be one.
    if (!raw.idempotencyKey.isWellFormed()) {
      return reject(
        'invalid_idempotency_key',
        'idempotencyKey must be well-formed Unicode (it holds a lone UTF-16 surrogate)',
      );
    }
    idempotencyKey = raw.idempotencyKey;
  }

  const visitor = checkId(raw.visitorId, 'visitorId', NEEDS_VISITOR.has(type), type === 'pageview');
  if (typeof visitor === 'object') return reject('invalid_visitor_id', visitor.message);
  const session = checkId(raw.sessionId, 'sessionId', NEEDS_SESSION.has(type), type === 'pageview');
  if (typeof session === 'object') return reject('invalid_session_id', session.message);

  if (!isPlainObject(raw.props)) return reject('invalid_props', 'props must be an object');
  const bound = jsonLengthBound(raw.props);
  // Only nested props (bound Infinity) need the depth walk, and it must come before JSON.stringify.
  if (bound === Infinity && nestsTooDeep(raw.props)) {
    return reject('invalid_props', `props may nest objects and arrays at most ${MAX_PROPS_DEPTH} levels deep`);
  }
  if (bound > MAX_PROPS_BYTES && JSON.stringify(raw.props).length > MAX_PROPS_BYTES) {
    return reject('invalid_props', `props must be at most ${MAX_PROPS_BYTES} bytes of JSON`);
  }
  const parsed = PROPS_SCHEMAS[type].safeParse(raw.props);
  if (!parsed.success) return reject('invalid_props', describeIssue(parsed.error));
  const checked = parsed.data as Record<string, unknown>;

  if (type === 'goal' && !ctx.activeGoals.has(checked.name as string)) {
    return reject(
      'unknown_goal',
      `props.name "${String(checked.name).slice(0, 100)}" is not an active goal of this website`,
    );
  }
  if (type === 'purchase') {
    const provider = (checked.payment_provider as string | undefined) ?? 'server';
    if (!(PAYMENT_PROVIDERS as readonly string[]).includes(provider)) {
      return reject(
        'invalid_payment_provider',
        `props.payment_provider must be one of ${PAYMENT_PROVIDERS.join(', ')}`,
      );
    }
    checked.payment_provider = provider;
    checked.currency ??= 'USD';
    checked.status ??= 'succeeded';
  }

  const custom: Record<string, unknown> = {};
  const props = raw.props;
  // Own keys in Object.entries order, without its array of pairs per event.
  for (const k in props)
    if (Object.hasOwn(props, k) && !Object.hasOwn(checked, k) && k !== '__proto__') custom[k] = props[k];
  return {
    ok: true,
    event: { type, ts, sessionId: session ?? '', visitorId: visitor ?? '', idempotencyKey, props: checked, custom },
  };
}
