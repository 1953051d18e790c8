// Serves the dashboard (web/, built into dist/web/): index.html for the app's pages, never cached and under a
// strict Content-Security-Policy, and the content-hashed assets it names, cached for a year and sent
// gzipped to clients that accept it. PUBLIC_URL's path is the prefix every link in the page starts with
// (a proxy in front forwards that prefix's requests here with the prefix removed).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { type Request, type Response, Router } from 'express';
import { DIST_ROOT } from '../../lib/paths';
import { errorBody } from '../middleware/envelope';

const DIR = path.join(DIST_ROOT, 'web');

/** The app's pages; any other path stays the API's 404. */
export const DASHBOARD_PATHS = [
  '/',
  '/setup',
  '/login',
  '/register',
  '/account',
  '/invite/:token',
  '/sites',
  '/sites/*rest',
  '/share/*rest',
];

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

// The replay player's document only (framed by the replays section, web/src/pages/dashboard/sections/
// replayFrame.ts): rrweb rebuilds a recorded page with that page's own <style> elements and style attributes,
// which style-src 'self' blocks, leaving an unstyled replay. 'unsafe-inline' is allowed for styles here and
// nowhere else; scripts stay 'self' (rrweb never runs the recorded page's scripts: its iframe is sandboxed).
// Images and fonts of the recorded page load from its own site over https, as in any replay tool.
const REPLAY_PLAYER_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "font-src 'self' data: https:",
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

interface Asset {
  body: Buffer;
  gzipped: Buffer;
  type: string;
}

function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const dir = path.join(DIR, 'assets');
  if (!fs.existsSync(dir)) return assets;
  for (const name of fs.readdirSync(dir)) {
    const body = fs.readFileSync(path.join(dir, name));
    assets.set(name, {
      body,
      gzipped: zlib.gzipSync(body, { level: 9 }),
      type: TYPES[path.extname(name)] ?? 'application/octet-stream',
    });
  }
  return assets;
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

interface EntryFiles {
  js: string;
  css: string | null;
  /** Chunks the entry imports statically, fetched beside it instead of after it. */
  preload?: string[];
}

interface Manifest extends EntryFiles {
  replay?: EntryFiles;
  /** Each lazily loaded page's source → its chunk and the chunks it imports beyond the entry's. */
  pages?: Record<string, string[]>;
}

function readManifest(): Manifest | null {
  const manifestFile = path.join(DIR, 'manifest.json');
  if (!fs.existsSync(manifestFile)) return null;
  return JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
}

const PAGES = 'web/src/pages';

/**
 * The page sources a path's first render loads (web/src/app.tsx's route table; on a site, the dashboard and
 * the section the path names, or the settings), so index.html can have them fetched beside the entry.
 */
function pageSources(p: string): string[] {
  const site = /^\/sites\/([^/]+)(?:\/([^/]+))?/.exec(p);
  if (site && site[1] === 'new') return [`${PAGES}/newSite.tsx`];
  if (site && site[2] === 'settings') return [`${PAGES}/settings/index.tsx`];
  if (site) return [`${PAGES}/dashboard/index.tsx`, `${PAGES}/dashboard/${site[2] ?? 'overview'}.tsx`];
  const top = /^\/([a-z]+)/.exec(p)?.[1];
  return top ? [`${PAGES}/${top}.tsx`] : [];
}

/** The replay player's document: its own script and styles, a box for the player, nothing else. */
function replayPlayerHtml(base: string, manifest: Manifest | null): string | null {
  const files = manifest?.replay;
  if (!files) return null;
  const b = escapeAttr(base);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="color-scheme" content="light dark">
<title>Session replay</title>
${files.css ? `<link rel="stylesheet" href="${b}/assets/${files.css}">` : ''}
<script type="module" src="${b}/assets/${files.js}"></script>
</head>
<body><div id="player"></div></body>
</html>
`;
}

function indexHtml(base: string, manifest: Manifest | null, pageChunks: string[]): string | null {
  if (!manifest) return null;
  const b = escapeAttr(base);
  const preload = [...new Set([...(manifest.preload ?? []), ...pageChunks])];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="tm-base" content="${b}">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>Tidemark</title>
${manifest.css ? `<link rel="stylesheet" href="${b}/assets/${manifest.css}">` : ''}
<script type="module" src="${b}/assets/${manifest.js}"></script>
${preload.map((f) => `<link rel="modulepreload" href="${b}/assets/${f}">`).join('\n')}
</head>
<body><div id="app"></div><noscript>Tidemark’s dashboard needs JavaScript.</noscript></body>
</html>
`;
}

export function dashboardRoutes(publicUrl: string): Router {
  const router = Router();
  const assets = loadAssets();
  const base = new URL(publicUrl).pathname.replace(/\/+$/, '');
  const manifest = readManifest();
  // One document per set of page chunks (a handful: one per page and dashboard section).
  const documents = new Map<string, string | null>();
  const htmlFor = (p: string) => {
    const chunks = pageSources(p).flatMap((source) => manifest?.pages?.[source] ?? []);
    const key = chunks.join();
    if (!documents.has(key)) documents.set(key, indexHtml(base, manifest, chunks));
    return documents.get(key) ?? null;
  };

  router.get('/assets/:file', (req, res) => {
    const asset = assets.get(String(req.params.file));
    if (!asset) {
      res.status(404).json(errorBody('NOT_FOUND', 'No such file'));
      return;
    }
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Vary', 'Accept-Encoding');
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      res.setHeader('Content-Encoding', 'gzip');
      res.send(asset.gzipped);
    } else res.send(asset.body);
  });

  const page = (req: Request, res: Response) => {
    const html = htmlFor(req.path);
    if (html === null) {
      res.status(503).json(errorBody('NOT_BUILT', 'The dashboard is not built (run npm run build)'));
      return;
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    // A shared dashboard may be framed by other sites (an embedded public dashboard); nothing else may.
    res.setHeader(
      'Content-Security-Policy',
      `${CONTENT_SECURITY_POLICY}; frame-ancestors ${req.path.startsWith('/share/') ? '*' : "'none'"}`,
    );
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.send(html);
  };
  router.get(DASHBOARD_PATHS, page);

  const replayHtml = replayPlayerHtml(base, manifest);
  router.get('/replay-player', (_req, res) => {
    if (replayHtml === null) {
      res.status(503).json(errorBody('NOT_BUILT', 'The dashboard is not built (run npm run build)'));
      return;
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Security-Policy', REPLAY_PLAYER_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.send(replayHtml);
  });
  return router;
}
