// CORS for browser ingestion and the tracker only (DESIGN §3): any origin, no credentials.
import type { RequestHandler } from 'express';

export function openCors(methods = 'GET, POST, OPTIONS'): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', methods);
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.setHeader('Access-Control-Max-Age', '86400');
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next();
  };
}
