// Serves the bundled tracker: /tracker.js (short cache, the address in every tag) and the content-hashed
// files under /tracker/ (cached for a year: their names change with their content).
import fs from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
import { DIST_ROOT } from '../../lib/paths';
import { openCors } from '../middleware/cors';
import { errorBody } from '../middleware/envelope';

const DIR = path.join(DIST_ROOT, 'tracker');

function loadBundles(): Map<string, string> {
  const files = new Map<string, string>();
  if (!fs.existsSync(DIR)) return files;
  for (const name of fs.readdirSync(DIR))
    if (name.endsWith('.js')) files.set(name, fs.readFileSync(path.join(DIR, name), 'utf8'));
  return files;
}

export function trackerRoutes(): Router {
  const files = loadBundles();
  const router = Router();
  const cors = openCors('GET, OPTIONS');
  const serve = (name: string, cache: string) => (_req: unknown, res: import('express').Response) => {
    const body = files.get(name);
    if (body === undefined) {
      res.status(404).json(errorBody('NOT_FOUND', 'Tracker not built (run npm run build)'));
      return;
    }
    res.setHeader('Content-Type', 'application/javascript; charset=utf-8');
    res.setHeader('Cache-Control', cache);
    res.send(body);
  };
  router.get('/tracker.js', cors, serve('tracker.js', 'public, max-age=300'));
  router.get('/tracker/:file', cors, (req, res) => {
    const name = String(req.params.file);
    if (name === 'tracker.js' || !/^[a-z]+\.[0-9a-f]{12}\.js$/.test(name)) {
      res.status(404).json(errorBody('NOT_FOUND', 'No such tracker file'));
      return;
    }
    serve(name, 'public, max-age=31536000, immutable')(req, res);
  });
  return router;
}
