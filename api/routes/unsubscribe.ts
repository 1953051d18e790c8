// Unsubscribe links of report and alert emails (docs/notifications.md): no sign-in, the signed token is the
// credential. GET only shows a confirmation form (mail scanners open links), POST unsubscribes: the form's
// button, or a mail client's one-click POST (RFC 8058, the List-Unsubscribe-Post header).
import { type Request, type Response, Router } from 'express';
import { readUnsubscribeToken, unsubscribe } from '../../lib/notifications/unsubscribe';
import { escapeHtml } from '../../lib/public/html';
import type { AppDeps } from '../deps';

/** The page's policy: its inline style, and a form that posts back to this server only. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function page(res: Response, status: number, title: string, body: string): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': PAGE_CSP,
      'Cache-Control': 'no-store',
    })
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'no-referrer')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
        `<title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1f2933">` +
        `<h1 style="font-size:1.3rem">${escapeHtml(title)}</h1>${body}</body></html>`,
    );
}

export function unsubscribeRoutes(deps: AppDeps): Router {
  const router = Router();
  const read = (req: Request) => readUnsubscribeToken(deps.config.JWT_SECRET, String(req.params.token ?? ''));
  const invalid = (res: Response) =>
    page(res, 404, 'Link not valid', '<p>This unsubscribe link is not valid. Copy the whole link from the email.</p>');

  router.get('/unsubscribe/:token', (req, res) => {
    const who = read(req);
    if (!who) return invalid(res);
    page(
      res,
      200,
      'Unsubscribe',
      `<p>Stop emailing reports and alerts of this website to <strong>${escapeHtml(who.email)}</strong>?</p>` +
        `<form method="post"><button type="submit" style="font-size:1rem;padding:.4rem 1rem">Unsubscribe</button></form>`,
    );
  });

  router.post('/unsubscribe/:token', async (req, res) => {
    const who = read(req);
    if (!who) return invalid(res);
    await unsubscribe(deps.pool, who.websiteId, who.email);
    page(
      res,
      200,
      'Unsubscribed',
      `<p><strong>${escapeHtml(who.email)}</strong> will get no more reports or alerts of this website.</p>`,
    );
  });
  return router;
}
