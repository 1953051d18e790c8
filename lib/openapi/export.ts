// The whole-site export's part of the OpenAPI document (GET /api/external/v2/export, lib/export/site.ts).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { SITE_EXPORT } from '../export/site';
import { z } from '../zod';
import { READER_SECURITY } from './common';
import { csvHeaders, errors, rateHeaders, statsBase, v2Extras } from './external';

export function registerExport(r: OpenAPIRegistry): void {
  r.registerPath({
    method: 'get',
    path: '/api/external/v2/export',
    tags: ['Stats API'],
    security: READER_SECURITY,
    summary: 'Whole-site export of a period: a ZIP of CSVs, streamed',
    description: `One CSV per file, each the Stats v2 answer of the same period and filters with every row: ${SITE_EXPORT.map(
      (f) => `${f.file} (${f.property ? `breakdown by ${f.property}` : 'timeseries by day'}: ${f.metrics.join(', ')})`,
    ).join(
      '; ',
    )}. CSV as the Stats v2 CSV answers (docs "CSV export"). Bad parameters are a JSON 400 before anything is sent; a failure after the first bytes ends the download early.`,
    request: {
      query: statsBase.pick({ site_id: true, period: true, date: true }).extend({ filters: v2Extras.filters }),
    },
    responses: {
      200: {
        description: 'A ZIP archive (deflate), attachment "<domain>-<first day>-<last day>.zip"',
        headers: rateHeaders.extend(csvHeaders.shape),
        content: { 'application/zip': { schema: z.string().openapi({ format: 'binary' }) } },
      },
      ...errors([400, 401, 403, 404, 429, 500, 503]),
    },
  });
}
