// Downloads: a body sent as a named attachment rather than in the JSON envelope.
import type { Response } from 'express';

export function attachmentHeaders(res: Response, contentType: string, fileName: string): void {
  res.setHeader('Content-Type', contentType);
  // The name is already limited to [A-Za-z0-9._-] (lib/export/csv.ts safeFileName): no quoting issues.
  res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.setHeader('Cache-Control', 'no-store');
}

/** A small body built in pieces (a CSV answer), sent at once. */
export function sendAttachment(res: Response, contentType: string, fileName: string, pieces: Iterable<string>): void {
  attachmentHeaders(res, contentType, fileName);
  res.status(200).send(Buffer.from([...pieces].join(''), 'utf8'));
}
