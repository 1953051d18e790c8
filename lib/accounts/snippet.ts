// The tracking snippet of a website: the one script tag (tracker/src/tracker.ts reads its data- attributes)
// with the options a site owner may need, and where the tracker will send events.
import { z } from '../zod';
import type { TrackingSnippetView } from './responses';

export const snippetQuery = z.object({
  /** Keep the visitor id in localStorage (cross-session visitors; needs consent where the law asks for it). */
  persist: z.enum(['true', 'false']).optional(),
  /** Also count pageviews on localhost / file: (development). */
  allow_localhost: z.enum(['true', 'false']).optional(),
});
export type SnippetQuery = z.infer<typeof snippetQuery>;

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function trackingSnippet(
  publicUrl: string,
  website: { id: string; tracking_code: string },
  options: SnippetQuery = {},
): TrackingSnippetView {
  const origin = publicUrl.replace(/\/+$/, '');
  const src = `${origin}/tracker.js`;
  const attributes = [
    'defer',
    `data-site="${escapeAttribute(website.tracking_code)}"`,
    ...(options.persist === 'true' ? ['data-persist="true"'] : []),
    ...(options.allow_localhost === 'true' ? ['data-allow-localhost'] : []),
    `src="${escapeAttribute(src)}"`,
  ];
  return {
    website_id: website.id,
    tracking_code: website.tracking_code,
    script: `<script ${attributes.join(' ')}></script>`,
    src,
    events_endpoint: `${origin}/api/events/${website.tracking_code}`,
    options: { persist: options.persist === 'true', allow_localhost: options.allow_localhost === 'true' },
  };
}
