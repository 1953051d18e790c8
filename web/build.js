// Bundles the dashboard with esbuild into dist/web/: content-hashed scripts and styles under assets/ (code split,
// so a page's chunk loads when it is first opened) and a manifest naming the entry files for the server.
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const out = path.join(__dirname, '..', 'dist', 'web');
const REPLAY_ENTRY = 'web/src/pages/dashboard/sections/replayFrame.ts';

async function main() {
  fs.rmSync(out, { recursive: true, force: true });
  const result = await esbuild.build({
    absWorkingDir: path.join(__dirname, '..'),
    // The replay player's document (api/routes/dashboard.ts) has its own entry: see replayFrame.ts.
    entryPoints: ['web/src/main.tsx', REPLAY_ENTRY],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    metafile: true,
    target: ['es2020'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    outdir: path.join(out, 'assets'),
    entryNames: '[name].[hash]',
    chunkNames: '[name].[hash]',
    assetNames: '[name].[hash]',
    loader: { '.svg': 'file', '.woff2': 'file' },
  });
  const outputs = Object.entries(result.metafile.outputs);
  const output = (entryPoint) => outputs.find(([, o]) => o.entryPoint === entryPoint);
  const [js, meta] = output('web/src/main.tsx');
  const [replayJs, replayMeta] = output(REPLAY_ENTRY);
  // Styles imported by lazily loaded pages land in files of their own that nothing would request: every
  // stylesheet but the replay player document's is joined into the one the app links (the main entry's first).
  const cssFiles = outputs
    .map(([file]) => file)
    .filter((file) => file.endsWith('.css') && file !== replayMeta.cssBundle);
  cssFiles.sort((a, b) => (a === meta.cssBundle ? -1 : b === meta.cssBundle ? 1 : a.localeCompare(b)));
  const root = path.join(__dirname, '..');
  const css = cssFiles.map((file) => fs.readFileSync(path.join(root, file), 'utf8')).join('\n');
  for (const file of cssFiles) fs.rmSync(path.join(root, file));
  const cssName = `main.${createHash('sha256').update(css).digest('hex').slice(0, 8).toUpperCase()}.css`;
  fs.writeFileSync(path.join(out, 'assets', cssName), css);
  // The chunks the entry imports statically: index.html names them for the browser to fetch beside it.
  const preload = result.metafile.outputs[js].imports
    .filter((i) => i.kind === 'import-statement' && !i.external)
    .map((i) => path.basename(i.path));
  // Each lazily loaded page's chunk and the chunks it imports statically (beyond the entry's): the server
  // names a path's page chunks in that path's index.html, so they download beside the entry.
  const staticImports = (file, seen = new Set()) => {
    for (const i of result.metafile.outputs[file].imports)
      if (i.kind === 'import-statement' && !i.external && !seen.has(i.path)) {
        seen.add(i.path);
        staticImports(i.path, seen);
      }
    return seen;
  };
  const entryFiles = new Set([js, ...staticImports(js)]);
  const pages = {};
  for (const [file, o] of outputs)
    if (o.entryPoint?.startsWith('web/src/pages/') && file.endsWith('.js'))
      pages[o.entryPoint] = [file, ...staticImports(file)]
        .filter((f) => !entryFiles.has(f))
        .map((f) => path.basename(f));
  const manifest = {
    js: path.basename(js),
    preload,
    pages,
    css: cssName,
    replay: { js: path.basename(replayJs), css: replayMeta.cssBundle ? path.basename(replayMeta.cssBundle) : null },
  };
  fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

main().catch((err) => {
  process.stderr.write(`dashboard build failed: ${err.message}\n`);
  process.exit(1);
});
