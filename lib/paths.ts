// The checkout's root, found the same way from sources (ts-jest) and from compiled dist/.
import fs from 'node:fs';
import path from 'node:path';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'sql'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`project root not found above ${start}`);
    dir = parent;
  }
}

export const PROJECT_ROOT = findRoot(__dirname);
export const SQL_ROOT = path.join(PROJECT_ROOT, 'sql');
export const DIST_ROOT = path.join(PROJECT_ROOT, 'dist');
