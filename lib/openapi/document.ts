// The OpenAPI 3.1.0 document of every API the web role serves (spec "Versioning": API version 1.0.0): the
// External API and Stats API, ingestion, and the dashboard APIs. Generated from the zod schemas the routes
// validate with and the lib functions return; paths are full paths under the deployment's PUBLIC_URL.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registerAccounts } from './accounts';
import { registerAnnotations } from './annotations';
import { registerAnomalies } from './anomalies';
import { registerSecuritySchemes } from './common';
import { registerConversations } from './conversations';
import { registerExport } from './export';
import { registerDocumentPaths, registerExternalApi } from './external';
import { registerFunnels } from './funnels';
import { registerIngestion } from './ingestion';
import { registerInsights } from './insights';
import { registerLtv } from './ltv';
import { registerNotifications } from './notifications';
import { registerPlausibleApi } from './plausible';
import { registerPublic } from './public';
import { registerQuery } from './query';
import { registerRetention } from './retention';
import { registerShare } from './share';
import { registerTeams } from './teams';
import { registerWebhooks } from './webhooks';
import { registerWebsiteSettings } from './websiteSettings';
import { registerWebsites } from './websites';

const API_VERSION = '1.0.0';
/** Where the document is served: the spec's address and one beside the other APIs. */
export const DOCUMENT_PATHS = ['/api/external/v1/openapi.json', '/api/openapi.json'];

function registry(): OpenAPIRegistry {
  const r = new OpenAPIRegistry();
  registerSecuritySchemes(r);
  registerDocumentPaths(r, DOCUMENT_PATHS);
  registerExternalApi(r);
  registerLtv(r);
  registerAnomalies(r);
  registerInsights(r);
  registerQuery(r);
  registerPlausibleApi(r);
  registerExport(r);
  registerIngestion(r);
  registerAccounts(r);
  registerWebsites(r);
  registerWebsiteSettings(r);
  registerWebhooks(r);
  registerTeams(r);
  registerFunnels(r);
  registerRetention(r);
  registerConversations(r);
  registerAnnotations(r);
  registerPublic(r);
  registerNotifications(r);
  registerShare(r);
  return r;
}

let cached: { url: string; doc: object } | undefined;

/** The document for a deployment's public URL; built once per process (it is a pure function of the code). */
export function openApiDocument(publicUrl: string): object {
  if (cached?.url === publicUrl) return cached.doc;
  const doc = new OpenApiGeneratorV31(registry().definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Tidemark API',
      version: API_VERSION,
      description: [
        'Every API of a Tidemark server.',
        'External API and Stats API (/api/external): read analytics with an API key (X-API-Key or Authorization: Bearer); paid plans only, the Stats API needs Pro or higher; rate limits per key and minute, a monthly request quota per team.',
        'Plausible-compatible API (POST /api/v2/query): Plausible’s Stats API v2 shapes with the Stats API’s credentials; errors {error, code}.',
        'Ingestion: server events with an API key (POST /api/v1/events, answered with the bare ingest result), browser events with the tracking code alone.',
        'Dashboard APIs (auth, users, websites, goals, exclusions, team members, teams, API keys, invites, error triage, conversations, onboarding, webhooks): a Bearer JWT from /api/auth/login.',
        'Shared dashboards (/api/share): while a website’s dashboard is shared, anyone with its link gets a short-lived share token (with the password, when one is set) that reads that website’s aggregates through POST /api/v2/query and nothing else.',
        'Public endpoints (/widgets, /e/live, /e/stats, /e/{trackingCode}/status, /e/realtime): no credential, CORS for any origin, a per-address limit; widgets are HTML unless Accept: application/json.',
        'Webhooks: what Tidemark POSTs to registered receivers is in the webhooks section, signed as docs/webhooks.md shows.',
        'Every other response uses the envelope {success, data, timestamp}; failures {success: false, error: {message, code, timestamp}}.',
      ].join('\n\n'),
    },
    servers: [{ url: publicUrl.replace(/\/$/, '') }],
  });
  cached = { url: publicUrl, doc };
  return doc;
}
