// What every family of the OpenAPI document shares: security schemes, the envelope, error responses and one
// way to register an operation. Schemas come from the modules the routes validate with and the lib functions
// return (lib/external/schemas.ts, lib/accounts/responses.ts, lib/ingest/accept/*Schemas.ts).
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { SESSION_COOKIE } from '../auth/tokens';
import { envelope, errorEnvelope } from '../external/schemas';
import { z } from '../zod';

type Security = NonNullable<RouteConfig['security']>;
export const SECURITY: Record<'apiKey' | 'jwt' | 'session' | 'public', Security> = {
  apiKey: [{ ApiKeyHeader: [] }, { BearerApiKey: [] }],
  jwt: [{ BearerJwt: [] }],
  session: [{ SessionCookie: [] }],
  public: [],
};

/** Read endpoints of the External and Stats APIs: an API key, or the dashboard's JWT or session cookie. */
export const READER_SECURITY: Security = [...SECURITY.apiKey, ...SECURITY.jwt, ...SECURITY.session];

export function registerSecuritySchemes(r: OpenAPIRegistry): void {
  r.registerComponent('securitySchemes', 'ApiKeyHeader', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  r.registerComponent('securitySchemes', 'BearerApiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'The API key as a Bearer token.',
  });
  r.registerComponent('securitySchemes', 'BearerJwt', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'The token from /api/auth/login, /api/auth/register or /api/auth/token.',
  });
  r.registerComponent('securitySchemes', 'ShareToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A shared dashboard’s token from POST /api/share/{websiteId}/token: POST /api/v2/query on that website only.',
  });
  r.registerComponent('securitySchemes', 'SessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The httpOnly session cookie set at sign-in.',
  });
  r.register('ErrorEnvelope', errorEnvelope);
}

export const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
const mediaTypes = (types: Record<string, z.ZodType> = {}) =>
  Object.fromEntries(Object.entries(types).map(([type, schema]) => [type, { schema }]));
const retryAfter = z.object({ 'Retry-After': z.string().openapi({ description: 'Seconds to wait.' }) });

/** The error responses of an operation, each described by `text` (the family's wording of each status). */
export function errorResponses(text: Record<number, string>, statuses: readonly number[]): RouteConfig['responses'] {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: text[s],
        content: json(errorEnvelope),
        ...(s === 429 || s === 503 ? { headers: retryAfter } : {}),
      },
    ]),
  );
}

/** Every path parameter: ids are UUIDs (anything else answers 404), the rest strings. */
function pathParams(path: string, descriptions: Record<string, string>) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  if (names.length === 0) return undefined;
  return z.object(
    Object.fromEntries(
      names.map((name) => [
        name,
        z.string().openapi({
          ...(name.endsWith('Id') ? { format: 'uuid' } : {}),
          param: { description: descriptions[name] ?? name },
        }),
      ]),
    ),
  );
}

/** The dashboard APIs' wording of each error status and path parameter. */
export const DASHBOARD_STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (VALIDATION_ERROR); the message names the field. Also a body that is not JSON or does not decompress, and a path that is not valid percent-encoded UTF-8 or holds a control character.',
  401: 'Missing, invalid or revoked credentials (UNAUTHORIZED).',
  403: 'The caller’s role is below the one needed, or the action is not allowed (FORBIDDEN); a plan limit is reached (PLAN_LIMIT_REACHED); API keys need a paid plan (API_PAID_PLAN_REQUIRED).',
  404: 'Not found, or not the caller’s to see (NOT_FOUND): another team’s ids answer the same.',
  409: 'Conflicts with what exists (CONFLICT).',
  413: 'Request body too large (PAYLOAD_TOO_LARGE).',
  415: 'Content-Encoding other than gzip, deflate or br, or an unsupported charset (UNSUPPORTED_MEDIA_TYPE).',
  429: 'Too many attempts (RATE_LIMITED); see Retry-After.',
  500: 'Server error (INTERNAL_ERROR).',
  503: 'A backing store is briefly unavailable (SERVICE_UNAVAILABLE); retry after Retry-After.',
};
export const DASHBOARD_PARAMS: Record<string, string> = {
  websiteId: 'Website UUID.',
  teamId: 'Team UUID.',
  goalId: 'Goal UUID.',
  memberId: 'Team member UUID.',
  keyId: 'API key UUID.',
  inviteId: 'Invite UUID.',
  exclusionId: 'Exclusion UUID.',
  groupId: 'Error group UUID.',
  webhookId: 'Webhook UUID.',
  token: 'The invite token from the invite link.',
};

/** Error statuses of a dashboard operation: `extra` plus what any request may get (and a body's). */
export const dashboardErrors = (extra: number[], withBody = false) =>
  [...new Set([400, ...extra, ...(withBody ? [413, 415] : []), 500, 503])].sort((a, b) => a - b);

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  tag: string;
  security: Security;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body may be left out. */
  bodyOptional?: boolean;
  /** Further media types the body may come as, besides JSON. */
  bodyAlso?: Record<string, z.ZodType>;
  /** The success answer's data, inside the envelope unless `bare`. */
  data: z.ZodType;
  status?: number;
  bare?: boolean;
  errors: readonly number[];
  /** Further success answers (status → data, enveloped). */
  alsoOk?: Record<number, z.ZodType>;
}

/** Registers an operation of one family, whose wording of error statuses and path parameters is given. */
export function operations(r: OpenAPIRegistry, statusText: Record<number, string>, paramText: Record<string, string>) {
  return (op: Operation) => {
    const params = pathParams(op.path, paramText);
    const ok = (data: z.ZodType) => ({ description: 'Success', content: json(op.bare ? data : envelope(data)) });
    r.registerPath({
      method: op.method,
      path: op.path,
      summary: op.summary,
      tags: [op.tag],
      security: op.security,
      request: {
        ...(params ? { params } : {}),
        ...(op.query ? { query: op.query } : {}),
        ...(op.body
          ? { body: { content: { ...json(op.body), ...mediaTypes(op.bodyAlso) }, required: !op.bodyOptional } }
          : {}),
      },
      responses: {
        [op.status ?? 200]: ok(op.data),
        ...Object.fromEntries(Object.entries(op.alsoOk ?? {}).map(([s, data]) => [s, ok(data)])),
        ...errorResponses(statusText, op.errors),
      },
    });
  };
}

/** Dashboard operations behind the Bearer JWT, by tag. */
export function jwtOperations(r: OpenAPIRegistry) {
  const register = operations(r, DASHBOARD_STATUS_TEXT, DASHBOARD_PARAMS);
  return (tag: string) => (op: Omit<Operation, 'tag' | 'security'>) => register({ ...op, tag, security: SECURITY.jwt });
}
