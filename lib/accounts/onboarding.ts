// Onboarding progress (spec "Onboarding record"): one record per user, defaults until the first save, then
// upserted. A save changes only the fields it gives.
import type { Pool } from 'pg';
import { z } from '../zod';
import { jsonProblem } from './storable';

export const MAX_ONBOARDING_STEP = 1000;
/** `data` serialized as JSON. */
export const MAX_ONBOARDING_DATA_BYTES = 16_384;
export const MAX_ONBOARDING_DATA_DEPTH = 8;

const onboardingData = z
  .record(z.string(), z.unknown())
  .superRefine((data, ctx) => {
    const problem = jsonProblem(data, MAX_ONBOARDING_DATA_DEPTH);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (Buffer.byteLength(JSON.stringify(data)) > MAX_ONBOARDING_DATA_BYTES)
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_ONBOARDING_DATA_BYTES} bytes as JSON` });
  })
  .openapi({
    description: `Free-form object; replaces the stored one. At most ${MAX_ONBOARDING_DATA_BYTES} bytes as JSON, nested at most ${MAX_ONBOARDING_DATA_DEPTH} levels.`,
  });

export const onboardingBody = z.object({
  step: z.number().int().min(0).max(MAX_ONBOARDING_STEP).optional().openapi({ description: 'Saved as current_step.' }),
  data: onboardingData.optional(),
  completed: z
    .boolean()
    .optional()
    .openapi({ description: 'false on the first save when left out; later saves keep the stored value.' }),
});
export type OnboardingBody = z.infer<typeof onboardingBody>;

const isoTime = z.string().datetime();
export const onboardingView = z.object({
  user_id: z.string(),
  current_step: z.number().int(),
  completed: z.boolean(),
  data: z.record(z.string(), z.unknown()),
  created_at: isoTime.nullable().openapi({ description: 'null until the progress is first saved.' }),
  updated_at: isoTime.nullable().openapi({ description: 'null until the progress is first saved.' }),
});
export type OnboardingView = z.infer<typeof onboardingView>;

interface OnboardingRow {
  user_id: string;
  current_step: number;
  completed: boolean;
  data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'user_id, current_step, completed, data, created_at, updated_at';

function view(row: OnboardingRow): OnboardingView {
  return {
    user_id: row.user_id,
    current_step: row.current_step,
    completed: row.completed,
    data: row.data,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The user's progress, or the defaults (step 0, not completed, no data) when they never saved any. */
export async function getOnboarding(pool: Pool, userId: string): Promise<OnboardingView> {
  const { rows } = await pool.query<OnboardingRow>(`SELECT ${COLUMNS} FROM onboarding_progress WHERE user_id = $1`, [
    userId,
  ]);
  if (rows[0]) return view(rows[0]);
  return { user_id: userId, current_step: 0, completed: false, data: {}, created_at: null, updated_at: null };
}

export async function saveOnboarding(pool: Pool, userId: string, body: OnboardingBody): Promise<OnboardingView> {
  const { rows } = await pool.query<OnboardingRow>(
    `INSERT INTO onboarding_progress AS o (user_id, current_step, completed, data)
     VALUES ($1, coalesce($2::int, 0), coalesce($3::boolean, false), coalesce($4::jsonb, '{}'::jsonb))
     ON CONFLICT (user_id) DO UPDATE SET
       current_step = coalesce($2::int, o.current_step),
       completed = coalesce($3::boolean, o.completed),
       data = coalesce($4::jsonb, o.data),
       updated_at = now()
     RETURNING ${COLUMNS}`,
    [userId, body.step ?? null, body.completed ?? null, body.data === undefined ? null : JSON.stringify(body.data)],
  );
  return view(rows[0]);
}
