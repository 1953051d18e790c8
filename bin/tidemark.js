#!/usr/bin/env node
// The `tidemark` command: runs the compiled CLI (built by `npm install` through the prepare script).
require('../dist/cli/main.js')
  .main(process.argv.slice(2))
  .then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`tidemark: ${err?.message ? err.message : err}\n`);
      process.exit(1);
    },
  );
