// A client generated from the OpenAPI document compiles: @hey-api/openapi-ts (a devDependency, run offline)
// writes a typed fetch client, and tsc checks it with a small program that signs in and reads top pages
// through it, plus a misuse the types must refuse. Proves the document is usable, not only valid.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApiDocument } from '../../../../lib/openapi/document';
import { PROJECT_ROOT } from '../../../../lib/paths';

const ROOT = PROJECT_ROOT;
const generator = path.join(path.dirname(require.resolve('@hey-api/openapi-ts/package.json')), 'bin/run.js');
const tsc = require.resolve('typescript/bin/tsc');

const program = `
import { createClient } from './generated/client';
import { getApiExternalV1AnalyticsByWebsiteIdPages, postApiAuthLogin } from './generated/sdk.gen';

export async function topPages(apiKey: string, websiteId: string): Promise<string[]> {
  const client = createClient({ baseUrl: 'http://localhost:3000' });
  const login = await postApiAuthLogin({ client, body: { email: 'owner@example.com', password: 'password-123' } });
  const token: string | undefined = login.data?.data.token;
  const userId: string | undefined = login.data?.data.user.id;
  // @ts-expect-error the document says what a sign-in answers; this is not part of it
  login.data?.data.nonexistent;
  const pages = await getApiExternalV1AnalyticsByWebsiteIdPages({
    client,
    path: { websiteId },
    query: { range: '7d', limit: 5 },
    headers: { 'X-API-Key': apiKey },
  });
  // @ts-expect-error range is one of the documented values
  await getApiExternalV1AnalyticsByWebsiteIdPages({ client, path: { websiteId }, query: { range: '2w' } });
  const views: number[] = (pages.data?.data.pages ?? []).map((p) => p.views);
  return [String(token), String(userId), ...views.map(String)];
}
`;

it('generates a TypeScript client from the document that compiles with tsc', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-openapi-client-'));
  try {
    fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(openApiDocument('http://localhost:3000')));
    execFileSync(
      process.execPath,
      [generator, '-i', 'openapi.json', '-o', 'generated', '-c', '@hey-api/client-fetch', '-s', '--no-log-file'],
      {
        cwd: dir,
        stdio: 'pipe',
      },
    );
    expect(fs.existsSync(path.join(dir, 'generated/sdk.gen.ts'))).toBe(true);
    fs.writeFileSync(path.join(dir, 'program.ts'), program);
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        include: ['program.ts', 'generated/**/*.ts'],
      }),
    );
    try {
      execFileSync(process.execPath, [tsc, '-p', dir], { cwd: ROOT, stdio: 'pipe' });
    } catch (err) {
      throw new Error(`the generated client does not compile:\n${(err as { stdout?: Buffer }).stdout?.toString()}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

it('carries no regular-expression flags in its patterns (JSON Schema patterns have none: /i would be literal text)', () => {
  const patterns = [
    ...JSON.stringify(openApiDocument('http://localhost:3000')).matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g),
  ].map((m) => m[1]);
  expect(patterns.length).toBeGreaterThan(0);
  expect(patterns.filter((p) => /\/[dgimsuvy]+$/.test(p))).toEqual([]);
});
