// GET /api/external/v2/export: the whole-site export for a period, a ZIP of CSVs (lib/export/site.ts), for an API
// key or a signed-in user as the Stats API v2. Streamed: each CSV is deflated into the response as its query
// answers; the first query runs before any byte is sent, so a failure there is still a JSON error envelope.

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Request, type Response, Router } from 'express';
import { conversionContext } from '../../../lib/accounts/goals';
import { HttpError } from '../../../lib/errors';
import { exportFileName, parseExportParams, siteExport } from '../../../lib/export/site';
import { type ZipEntry, zipStream } from '../../../lib/export/zip';
import type { AppDeps } from '../../deps';
import { readableWebsite } from '../../middleware/auth';
import { attachmentHeaders } from './attachment';

/** `first`, then the rest; yield* passes a reader's early stop on to `rest`. */
async function* prepend<T>(first: T, rest: AsyncIterable<T>): AsyncGenerator<T> {
  yield first;
  yield* rest;
}

export function exportRoutes({ pool, clickhouse, logger }: AppDeps): Router {
  const router = Router();
  router.get('/export', async (req: Request, res: Response) => {
    const params = parseExportParams(req.query as Record<string, unknown>);
    if ('error' in params) throw new HttpError(400, params.error.code, params.error.message);
    const website = await readableWebsite(pool, res, params.siteId);

    // A client that goes away cancels the query under way and the ones not yet started.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const ref = { id: website.id, timezone: website.timezone, conversions: () => conversionContext(pool, website.id) };
    const entries = siteExport(clickhouse, ref, params, abort.signal);
    let first: IteratorResult<ZipEntry>;
    try {
      first = await entries.next();
    } catch (err) {
      if (abort.signal.aborted) return;
      throw err;
    }
    attachmentHeaders(res, 'application/zip', exportFileName(website.domain, params, website.timezone));
    res.status(200);
    const archive = first.done ? zipStream([]) : zipStream(prepend(first.value, entries));
    // A failure of our own, told apart from the cancellation a disconnect causes.
    let failure: unknown;
    async function* watched() {
      try {
        yield* archive;
      } catch (err) {
        if (!abort.signal.aborted) failure = err;
        throw err;
      }
    }
    try {
      await pipeline(Readable.from(watched()), res);
    } catch {
      // Headers are out: a failure can only end the response early, which the client sees as a broken download.
      if (failure) logger.error({ err: failure, websiteId: website.id }, 'site export failed');
      else logger.info({ websiteId: website.id }, 'site export ended early: the client disconnected');
      res.destroy();
    }
  });
  return router;
}
