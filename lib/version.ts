// This build's package.json facts: the version (`tidemark --version`, role heartbeats, backup manifests) and the
// Node.js range it runs on (checked when a process starts).
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths';

const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines?: { node?: string };
};

export const VERSION: string = pkg.version;
export const NODE_RANGE: string | undefined = pkg.engines?.node;
