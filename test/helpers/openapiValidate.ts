// Every API response a test sees is checked against the OpenAPI document the service serves: the path and
// status must be documented, and the body must match that status's schema. test/helpers/http.ts calls this
// for every request, so no test can pass on a response the document does not describe. Exempt: CORS
// preflights, the catch-all 404 of unknown paths, the 400 of unreadable ones, and what is not an API (/tracker.js, /healthz, /metrics).
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { pathProblem } from '../../api/middleware/validate';
import { openApiDocument } from '../../lib/openapi/document';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, unknown>;
}

const doc = openApiDocument('http://localhost') as unknown as Doc;

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv);
// Component refs ('#/components/...') resolve against the document, registered once under its own id.
ajv.addSchema({ $id: 'openapi', components: doc.components });
const toDocRefs = (schema: unknown): unknown =>
  JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/'));

// Literal paths before templated ones, so /api/openapi.json is never taken for a {parameter}.
const templates = Object.keys(doc.paths)
  .map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);
const compiled = new Map<string, ValidateFunction>();

/**
 * Throws when an API response is not what the document says. A response of another media type than JSON (a
 * CSV, a ZIP) must be one the document lists for that status; its body is the client's to check.
 */
export function checkAgainstOpenApi(
  method: string,
  url: string,
  status: number,
  body: unknown,
  contentType?: string | null,
): void {
  if (method.toUpperCase() === 'OPTIONS') return;
  const pathname = new URL(url, 'http://localhost').pathname;
  const match = templates.find((t) => t.pattern.test(pathname));
  const operation = match && doc.paths[match.template][method.toLowerCase()];
  if (!operation) {
    // An unknown endpoint's 404 comes from the catch-all handler, and an unreadable path's 400 from the guard
    // in front of every route: no document path describes either.
    if (status === 404 || (status === 400 && pathProblem(pathname)) || (!match && !pathname.startsWith('/api/')))
      return;
    throw new Error(`OpenAPI: ${method} ${pathname} answered ${status} but the document has no such operation`);
  }
  const response = operation.responses[String(status)];
  if (!response)
    throw new Error(`OpenAPI: ${method} ${match.template} answered ${status}, which the document does not list`);
  const mediaType = contentType?.split(';')[0].trim().toLowerCase();
  if (mediaType && mediaType !== 'application/json') {
    if (!response.content?.[mediaType])
      throw new Error(
        `OpenAPI: ${method} ${match.template} answered ${status} as ${mediaType}, which it does not list`,
      );
    return;
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return;
  const key = `${method} ${match.template} ${status}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(toDocRefs(schema) as object);
    compiled.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `OpenAPI: ${key} body does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}
