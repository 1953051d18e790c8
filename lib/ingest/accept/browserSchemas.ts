// The browser event (spec "Browser event") plus the event types DESIGN §3 adds: pageview, engagement,
// click (heatmap), error and replay. Unknown fields are stripped; every string is capped.

import { websiteSettings } from '../../external/schemas';
import { z } from '../../zod';

export const BROWSER_EVENT_TYPES = ['custom', 'pageview', 'engagement', 'click', 'error', 'replay'] as const;
export const MAX_BROWSER_BODY_BYTES = 512 * 1024; // replay chunks are the large ones

const text = (max: number) => z.string().max(max);
// Fields real pages overrun (long query strings, deep stacks): kept, cut to a length, never a reason to refuse.
const cut = (max: number) => z.string().transform((s) => s.slice(0, max));
const dim = z.number().int().min(0).max(100_000);

export const browserEventSchema = z
  .object({
    event_type: z.enum(BROWSER_EVENT_TYPES),
    event_name: text(200).optional(),
    session_id: z.string().min(8, 'must be at least 8 characters').max(128),
    visitor_id: text(128).optional(),
    url: z
      .string()
      .min(1)
      .transform((s) => s.slice(0, 2048)),
    referrer: cut(2048).optional(),
    device_type: text(32),
    browser: text(64),
    os: text(64),
    user_agent: cut(1024),
    screen_width: dim.optional(),
    screen_height: dim.optional(),
    language: text(35).optional(),
    props: z.record(z.string().max(100), z.union([z.string().max(500), z.number(), z.boolean(), z.null()])).optional(),
    // engagement
    engagement_ms: z
      .number()
      .int()
      .min(0)
      .max(24 * 3600_000)
      .optional(),
    scroll_depth: z.number().int().min(0).max(100).optional(),
    // click
    x: dim.optional(),
    y: z.number().int().min(0).max(10_000_000).optional(),
    viewport_width: dim.optional(),
    viewport_height: dim.optional(),
    page_height: z.number().int().min(0).max(10_000_000).optional(),
    selector: cut(512).optional(),
    // error
    message: cut(2000).optional(),
    error_type: text(100).optional(),
    stack: cut(16_000).optional(),
    // replay
    seq: z.number().int().min(0).max(1_000_000).optional(),
    data: text(MAX_BROWSER_BODY_BYTES).optional(),
    // the tracker's opt-out flag (localStorage tidemark_ignore), should a page send anyway
    ignore: z.boolean().optional(),
  })
  .superRefine((e, ctx) => {
    const need = (field: keyof typeof e, why: string) => {
      if (e[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required for ${why}` });
    };
    if (e.event_type === 'custom') need('event_name', 'custom events');
    if (e.event_type === 'click') for (const f of ['x', 'y'] as const) need(f, 'click events');
    if (e.event_type === 'error') need('message', 'error events');
    if (e.event_type === 'replay') for (const f of ['seq', 'data'] as const) need(f, 'replay events');
  });

export type BrowserEvent = z.infer<typeof browserEventSchema>;

export const IGNORE_REASONS = [
  'replay_disabled',
  'heatmaps_disabled',
  'bot',
  'gpc',
  'opt_out',
  'excluded_ip',
  'excluded_path',
  'domain_not_allowed',
  'replay_quota_exceeded',
] as const;
export type IgnoreReason = (typeof IGNORE_REASONS)[number];

/** The answer to a browser event (inside the success envelope): recorded, or ignored with the first reason. */
const eventNaming = { event_type: z.enum(BROWSER_EVENT_TYPES), event_name: z.string().nullable() };
export const browserIngestResultSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('event_recorded'), ...eventNaming }),
  z.object({ type: z.literal('event_ignored'), reason: z.enum(IGNORE_REASONS), ...eventNaming }),
]);
export type BrowserIngestResult = z.infer<typeof browserIngestResultSchema>;
/** What the tracker reads before it sends: the website's tracking settings. */
export const trackerConfigSchema = z.object({ tracking_code: z.string(), settings: websiteSettings });
export type TrackerConfig = z.infer<typeof trackerConfigSchema>;
