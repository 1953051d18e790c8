// Layering rules (DESIGN.md §2), checked by `npm run lint`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'web-uses-types-only',
      severity: 'error',
      comment: 'The dashboard runs in the browser: from the server it takes types (inferred from schemas), never code.',
      from: { path: '^web/' },
      to: { path: '^(api|workers|jobs|lib|cli)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make load order matter and modules impossible to read alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-is-shared',
      severity: 'error',
      comment: 'lib/ is shared by every role; it never reaches into a role or the command line.',
      from: { path: '^lib/' },
      to: { path: '^(api|workers|jobs|cli|bench|test)/' },
    },
    {
      name: 'routes-without-clickhouse-client',
      severity: 'error',
      comment: 'Routes parse, call lib and respond; statements are built and run in lib/.',
      from: { path: '^api/routes/' },
      to: { path: ['^lib/clickhouse/client\\.ts$', '@clickhouse/client'] },
    },
    {
      name: 'roles-apart',
      severity: 'error',
      comment: 'The web and worker roles share code only through lib/; the worker runs the job bodies of jobs/.',
      from: { path: '^(api|workers|jobs)/' },
      to: { path: '^(api|workers|jobs)/', pathNot: ['^$1/', '^jobs/'] },
    },
    {
      name: 'only-the-worker-runs-jobs',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^jobs/' },
    },
    {
      name: 'no-test-or-bench-in-service',
      severity: 'error',
      from: { path: '^(api|workers|jobs|lib|cli)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
