// A visit's value score (DESIGN §3), in one place for the query model and the rollup job.

/**
 * The score over the folded session columns: 10 per pageview up to 4, 5 per whole engaged minute up to 25,
 * 15 for an interaction, 20 for a goal, 10 when identified, 20 for a purchase.
 */
export const VALUE_SCORE_SQL = `least(100, 10 * least(pv, 4) + least(25, intDiv(eng, 60000) * 5) + 15 * (it > 0) + 20 * (goals > 0) + 10 * idf + 20 * (buys > 0))`;
/** The folded columns VALUE_SCORE_SQL reads, beyond pv and it. */
export const SCORE_COLUMNS =
  'sum(engagement_ms) AS eng, sum(goals) AS goals, max(identified) AS idf, sum(purchases) AS buys';
