// This build's version, from package.json: reported by `tidemark --version`, role heartbeats and /healthz.
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths';

export const VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
