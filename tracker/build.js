// Bundles the browser tracker with esbuild into dist/tracker/: the core (tracker.js plus a content-hashed
// copy) and the replay bundle (content-hashed, loaded on demand). A manifest names the files for the server.
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const out = path.join(__dirname, '..', 'dist', 'tracker');
const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 12);

async function bundle(entry, options) {
  const result = await esbuild.build({
    entryPoints: [path.join(__dirname, 'src', entry)],
    bundle: true,
    minify: true,
    write: false,
    target: ['es2020'],
    legalComments: 'none',
    ...options,
  });
  return result.outputFiles[0].text;
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  const replay = await bundle('replay.ts', { format: 'esm' });
  const replayFile = `replay.${hash(replay)}.js`;
  const core = await bundle('tracker.ts', { format: 'iife', define: { REPLAY_FILE: JSON.stringify(replayFile) } });
  const coreFile = `tracker.${hash(core)}.js`;
  for (const old of fs.readdirSync(out)) fs.rmSync(path.join(out, old));
  fs.writeFileSync(path.join(out, 'tracker.js'), core);
  fs.writeFileSync(path.join(out, coreFile), core);
  fs.writeFileSync(path.join(out, replayFile), replay);
  fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify({ core: coreFile, replay: replayFile }, null, 2));
}

main().catch((err) => {
  process.stderr.write(`tracker build failed: ${err.message}\n`);
  process.exit(1);
});
