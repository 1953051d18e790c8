// Chart annotations (spec "Annotations"): the request body and list query of /api/annotations and the
// annotation as the API shows it. Routes validate with these, lib returns their inferred types, lib/openapi
// documents them.
import { z } from '../zod';
import { uuid } from './schemas';
import { jsonProblem, text } from './storable';

export const ANNOTATION_TYPES = ['deploy', 'release', 'campaign', 'incident', 'custom'] as const;
export type AnnotationType = (typeof ANNOTATION_TYPES)[number];

export const MAX_MESSAGE_LENGTH = 500;
/** Characters of the metadata object as JSON: room for a commit, a build URL and a few labels. */
export const MAX_METADATA_CHARS = 4096;
/** The list (and the timeseries overlay) returns at most this many annotations (spec "Limits"). */
export const MAX_LISTED_ANNOTATIONS = 500;
/** A same-type annotation this close to an existing one's occurred_at (either side, inclusive) is a 409. */
export const SAME_TYPE_WINDOW_MS = 5 * 60 * 1000;

/** ISO 8601 with a time and Z or an offset, from 1970 on (PostgreSQL has no year 0 and nothing earlier matters). */
const isoInstant = z
  .string()
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-05-01T12:00:00Z' })
  .refine((v) => Date.parse(v) >= 0, 'must be 1970-01-01T00:00:00Z or later');

const metadata = z
  .record(z.string().max(100), z.unknown())
  .refine(
    (m) => JSON.stringify(m).length <= MAX_METADATA_CHARS,
    `must be at most ${MAX_METADATA_CHARS} characters as JSON`,
  )
  // The length cap bounds the nesting already (every level costs characters): no depth limit of its own.
  .superRefine((m, ctx) => {
    const problem = jsonProblem(m, MAX_METADATA_CHARS);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .openapi({ description: `A free-form JSON object, at most ${MAX_METADATA_CHARS} characters as JSON.` });

export const createAnnotationBody = z.object({
  websiteId: uuid,
  type: z.enum(ANNOTATION_TYPES),
  message: text().min(1, 'must be 1 to 500 characters').max(MAX_MESSAGE_LENGTH, 'must be 1 to 500 characters'),
  occurredAt: isoInstant.optional().openapi({ description: 'When it happened; default: now.' }),
  metadata: metadata.optional(),
});
export type CreateAnnotationBody = z.infer<typeof createAnnotationBody>;

export const listAnnotationsQuery = z
  .object({
    websiteId: uuid,
    from: isoInstant.optional().openapi({ description: 'Earliest occurred_at (inclusive).' }),
    to: isoInstant.optional().openapi({ description: 'Latest occurred_at (inclusive).' }),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to), {
    message: 'from must not be after to',
    path: ['from'],
  });

const isoTime = z.string().datetime();

export const annotationView = z
  .object({
    id: z.string(),
    website_id: z.string(),
    team_id: z.string(),
    type: z.enum(ANNOTATION_TYPES),
    message: z.string(),
    occurred_at: isoTime,
    created_by: z.string().nullable().openapi({ description: 'The user who created it; null once they are deleted.' }),
    metadata_json: z.record(z.string(), z.unknown()),
    created_at: isoTime,
  })
  .openapi('Annotation');
export type AnnotationView = z.infer<typeof annotationView>;
