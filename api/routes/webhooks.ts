// /api/websites/:websiteId/webhooks (DESIGN §3 "Webhooks", docs/webhooks.md): admins register, list, change and
// delete a website's webhooks, read their deliveries log and send a test delivery. The URL is judged as written
// and by what its host resolves to; the worker judges it again before every attempt.
import { randomUUID } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import type { DeletedView } from '../../lib/accounts/responses';
import { requireWebsiteRole } from '../../lib/accounts/websites';
import { badRequest, notFound } from '../../lib/errors';
import { TEST_EVENT } from '../../lib/webhooks/payloads';
import { createWebhookBody, deliveriesQuery, updateWebhookBody } from '../../lib/webhooks/schemas';
import { sendWebhook } from '../../lib/webhooks/send';
import { generateSecret } from '../../lib/webhooks/signature';
import {
  createWebhook,
  deleteWebhook,
  deliveryView,
  getDelivery,
  listDeliveries,
  listWebhooks,
  openDelivery,
  recordAttempt,
  requireWebhook,
  updateWebhook,
  webhookView,
} from '../../lib/webhooks/store';
import {
  type ResolveHost,
  resolveTarget,
  systemResolve,
  TargetRefused,
  type TargetRules,
} from '../../lib/webhooks/target';
import type { AppDeps } from '../deps';
import { userId } from '../middleware/auth';
import { sendData } from '../middleware/envelope';
import { parseBody, parseQuery, pathUuid } from '../middleware/validate';

/** A test delivery waits this long for the receiver: the caller is waiting too. */
const TEST_TIMEOUT_MS = 10_000;

export function webhookRoutes({ pool, config, webhookResolve }: AppDeps): Router {
  const router = Router({ mergeParams: true });
  const rules: TargetRules = {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    production: config.NODE_ENV === 'production',
  };
  const resolve: ResolveHost = webhookResolve ?? systemResolve;
  const createBody = createWebhookBody(rules);
  const updateBody = updateWebhookBody(rules);
  const admin = async (req: Parameters<typeof pathUuid>[0], res: Parameters<typeof userId>[0]) =>
    (await requireWebsiteRole(pool, pathUuid(req, 'websiteId', 'Website'), userId(res), 'admin')).website;
  const webhookId = (req: Parameters<typeof pathUuid>[0]) => pathUuid(req, 'webhookId', 'Webhook');
  // A name that resolves to a private address is refused now rather than at the first delivery.
  const checkResolves = async (url: string) => {
    try {
      await resolveTarget(url, rules, resolve);
    } catch (err) {
      if (err instanceof TargetRefused) throw badRequest(err.message);
      throw err;
    }
  };

  router.get('/', async (req, res) => {
    const website = await admin(req, res);
    sendData(res, { webhooks: (await listWebhooks(pool, website.id)).map(webhookView) });
  });

  router.post('/', async (req, res) => {
    const website = await admin(req, res);
    const body = parseBody(createBody, req);
    await checkResolves(body.url);
    const secret = body.secret ?? generateSecret();
    const webhook = await createWebhook(pool, website.id, userId(res), body, secret);
    sendData(res, { webhook: webhookView(webhook), secret }, 201);
  });

  const update = async (req: Request, res: Response) => {
    const website = await admin(req, res);
    const body = parseBody(updateBody, req);
    if (body.url !== undefined) await checkResolves(body.url);
    sendData(res, { webhook: webhookView(await updateWebhook(pool, website.id, webhookId(req), body)) });
  };
  router.put('/:webhookId', update);
  router.patch('/:webhookId', update);

  router.delete('/:webhookId', async (req, res) => {
    const website = await admin(req, res);
    await deleteWebhook(pool, website.id, webhookId(req));
    sendData(res, { deleted: true } satisfies DeletedView);
  });

  router.get('/:webhookId/deliveries', async (req, res) => {
    const website = await admin(req, res);
    const webhook = await requireWebhook(pool, website.id, webhookId(req));
    const { limit, offset } = parseQuery(deliveriesQuery, req);
    const page = await listDeliveries(pool, webhook.id, limit, offset);
    sendData(res, { deliveries: page.deliveries.map(deliveryView), total: page.total, limit, offset });
  });

  // Sent at once, from this process, and answered with its outcome (also in the log); not retried and not
  // counted against the webhook's failure run. Sent even to a webhook that is turned off: that is how to check
  // a receiver before turning it back on.
  router.post('/:webhookId/test', async (req, res) => {
    const website = await admin(req, res);
    const webhook = await requireWebhook(pool, website.id, webhookId(req));
    const key = `test-${randomUUID()}`;
    const id = randomUUID();
    await openDelivery(pool, { id, webhookId: webhook.id, event: TEST_EVENT, key });
    const body = JSON.stringify({
      event: TEST_EVENT,
      timestamp: new Date().toISOString(),
      data: { webhook_id: webhook.id, website_id: website.id, message: 'A test delivery from Tidemark.' },
    });
    const outcome = await sendWebhook({
      url: webhook.url,
      secret: webhook.secret,
      event: TEST_EVENT,
      deliveryId: id,
      body,
      timeoutMs: TEST_TIMEOUT_MS,
      rules,
      resolve,
    });
    await recordAttempt(pool, id, outcome, null);
    const delivery = await getDelivery(pool, id);
    if (!delivery) throw notFound('Webhook not found'); // deleted while the test ran
    sendData(res, { delivery: deliveryView(delivery) });
  });
  return router;
}
