#!/usr/bin/env -S node --max-semi-space-size=8
// The package bin. npm puts node_modules/.bin first on PATH for `npx platform` and npm scripts,
// so `env node` finds the pinned Node 24, which runs the TypeScript sources by type stripping.
// --max-semi-space-size=8 caps V8's young generation at 8 MB semi-spaces (16 by default): the idle
// process stays under 150 MB resident (134–136 vs 152 MB measured); README, Benchmarks, says what it
// may cost. `npm start` and the benchmarks run with the same flag.
import '../src/main.ts';
