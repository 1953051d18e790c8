// The shared dashboard's requests and answers (issue 24 point 5): the sharing settings an admin changes, what
// the public page learns about a shared website, and the share token it reads aggregates with. Routes validate
// and answer with these; lib/openapi/share.ts documents them; web/ takes its types from them.
import { z } from '../zod';

/** A share password: long enough not to be guessed in the throttle's allowance, short enough to hash cheaply. */
const sharePassword = z.string().min(8, 'must be at least 8 characters').max(512);

export const sharingBody = z
  .object({
    public_dashboard: z.boolean().optional(),
    password: sharePassword.nullable().optional().openapi({
      description: 'A new share password; null removes it (anyone with the link may view); absent keeps it.',
    }),
  })
  .refine((b) => b.public_dashboard !== undefined || b.password !== undefined, {
    message: 'give public_dashboard and/or password',
  });
export type SharingBody = z.infer<typeof sharingBody>;

export const sharingView = z.object({
  website_id: z.string(),
  public_dashboard: z.boolean(),
  password_set: z
    .boolean()
    .openapi({ description: 'Whether the link asks for a password (the password is never shown).' }),
  share_path: z.string().openapi({ description: 'The shared page’s path under PUBLIC_URL: /share/<website id>.' }),
  updated_at: z.string().datetime().nullable(),
});
export type SharingView = z.infer<typeof sharingView>;

export const shareInfoView = z.object({
  website_id: z.string(),
  name: z.string(),
  domain: z.string(),
  timezone: z.string(),
  password_required: z.boolean(),
});
export type ShareInfoView = z.infer<typeof shareInfoView>;

export const shareTokenBody = z.object({ password: z.string().max(512).optional() });

export const shareTokenView = z.object({
  token: z.string().openapi({
    description: 'A Bearer token for POST /api/v2/query on this website only (aggregates); nothing else accepts it.',
  }),
  expires_in: z.number().int().min(0),
});
export type ShareTokenView = z.infer<typeof shareTokenView>;
