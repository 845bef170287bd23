// Builds a package (run in its folder by `npm run build`): ESM with types in dist/, and CommonJS with
// types in dist/cjs/ (marked by its own package.json), so that `import` and `require` both find it.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (...flags) =>
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', ...flags], { stdio: 'inherit' });

rmSync('dist', { recursive: true, force: true });
run();
run('--outDir', 'dist/cjs', '--module', 'commonjs', '--moduleResolution', 'bundler');
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
