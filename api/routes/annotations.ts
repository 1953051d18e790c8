// /api/annotations (spec "Annotations"): the session cookie only, cross-site writes refused. Viewers list,
// editors create and delete.
import { Router } from 'express';
import { createAnnotationBody, listAnnotationsQuery } from '../../lib/accounts/annotationSchemas';
import {
  annotationView,
  annotationWebsite,
  createAnnotation,
  deleteAnnotation,
  listAnnotations,
} from '../../lib/accounts/annotations';
import type { DeletedView } from '../../lib/accounts/responses';
import type { AppDeps } from '../deps';
import { requireSessionOnly, userId } from '../middleware/auth';
import { sameOriginWrites } from '../middleware/csrf';
import { sendData } from '../middleware/envelope';
import { parseBody, parseQuery, pathUuid } from '../middleware/validate';

export function annotationRoutes({ pool, config }: AppDeps): Router {
  const router = Router();
  router.use(sameOriginWrites(config.PUBLIC_URL), requireSessionOnly(pool));

  router.post('/', async (req, res) => {
    const body = parseBody(createAnnotationBody, req);
    const website = await annotationWebsite(pool, body.websiteId.toLowerCase(), userId(res), 'editor');
    const annotation = await createAnnotation(pool, website, userId(res), body, new Date());
    sendData(res, { annotation: annotationView(annotation) }, 201);
  });

  router.get('/', async (req, res) => {
    const q = parseQuery(listAnnotationsQuery, req);
    const website = await annotationWebsite(pool, q.websiteId.toLowerCase(), userId(res), 'viewer');
    const rows = await listAnnotations(
      pool,
      website.id,
      q.from ? new Date(q.from) : undefined,
      q.to ? new Date(q.to) : undefined,
    );
    sendData(res, { annotations: rows.map(annotationView) });
  });

  router.delete('/:annotationId', async (req, res) => {
    await deleteAnnotation(pool, pathUuid(req, 'annotationId', 'Annotation'), userId(res));
    sendData(res, { deleted: true } satisfies DeletedView);
  });
  return router;
}
