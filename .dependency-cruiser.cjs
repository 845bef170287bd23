// The import rules of the house, checked by `npm run lint` (dependency-cruiser, reading the TypeScript
// compiler's view, type-only imports included).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'No import cycle, type-only imports included: a cycle means two rooms that are one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment:
        'No cycle between the folders of src/ either: two folders that import each other are one room ' +
        'with a wall in it (the file rule above cannot see a cycle that runs through different files).',
      scope: 'folder',
      from: { path: '^src/' },
      to: { path: '^src/', circular: true },
    },
    {
      name: 'lib-is-the-floor',
      severity: 'error',
      comment:
        'src/lib/ holds what several rooms use (the signature header, subscription patterns, ids, random ' +
        'bytes, defaults): it imports nothing of src/ above it, so a helper never drags its first user along.',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'domain-above-http',
      severity: 'error',
      comment:
        'Domain folders do not import http/: the API stands on the domain, never the other way round. ' +
        'Only the composition root (service.ts) and the CLI wire http/ in.',
      from: { path: '^src/', pathNot: '^src/(http/|service\\.ts$|main\\.ts$)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'src-stands-alone',
      severity: 'error',
      comment: 'The service imports nothing of the tests, benchmarks or their support.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|support)/' },
    },
    {
      name: 'support-stands-alone',
      severity: 'error',
      comment: 'support/ is shared by tests, benchmarks and CI: it imports none of them.',
      from: { path: '^support/' },
      to: { path: '^(test|bench|\\.ci)/' },
    },
    {
      name: 'packages-stand-alone',
      severity: 'error',
      comment:
        'A package ships alone: it imports nothing of the service, its tests, or another package ' +
        '(its tests may use the service through HTTP only).',
      from: { path: '^packages/([^/]+)/' },
      to: { path: '^(src|test|bench|support|packages)/', pathNot: '^packages/$1/' },
    },
    {
      name: 'examples-stand-alone',
      severity: 'error',
      comment:
        'An example is a product of its own that a team copies: it reaches the platform through its published ' +
        'packages and HTTP only, never its source, and no other example.',
      from: { path: '^examples/([^/]+)/' },
      to: { path: '^(src|test|bench|support|examples)/', pathNot: '^examples/$1/' },
    },
    {
      name: 'portal-stands-alone',
      severity: 'error',
      comment: 'The portal runs in a browser: it talks to the service through HTTP and imports none of it.',
      from: { path: '^web/' },
      to: { path: '^(src|test|bench|support)/' },
    },
    {
      name: 'service-without-packages',
      severity: 'error',
      comment: 'The service does not import the packages its users install.',
      from: { path: '^src/' },
      to: { path: '^packages/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|bench/results|packages/[^/]+/dist|web/portal/dist)' },
  },
};
