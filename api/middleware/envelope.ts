// The success envelope of every JSON API except the bare ingest result: {success, data, timestamp}.
import type { Response } from 'express';

export function sendData(res: Response, data: unknown, status = 200): void {
  res.status(status).json({ success: true, data, timestamp: new Date().toISOString() });
}

export function errorBody(code: string, message: string) {
  return { success: false as const, error: { message, code, timestamp: new Date().toISOString() } };
}
