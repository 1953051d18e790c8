// Deletes dashboard sessions past their expiry, so the sessions table holds only live ones.
import type { Pool } from 'pg';

export async function expireSessions(pool: Pool): Promise<{ deleted: number }> {
  const { rowCount } = await pool.query('DELETE FROM user_sessions WHERE expires_at <= now()');
  return { deleted: rowCount ?? 0 };
}
