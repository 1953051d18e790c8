// Bundles the dashboard with esbuild into dist/web/: content-hashed scripts and styles under assets/ (code split,
// so a page's chunk loads when it is first opened) and a manifest naming the entry files for the server.
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
  const files = (entryPoint) => {
    const [js, meta] = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint === entryPoint);
    return { js: path.basename(js), css: meta.cssBundle ? path.basename(meta.cssBundle) : null };
  };
  const manifest = { ...files('web/src/main.tsx'), replay: files(REPLAY_ENTRY) };
  fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

main().catch((err) => {
  process.stderr.write(`dashboard build failed: ${err.message}\n`);
  process.exit(1);
});
