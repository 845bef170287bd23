#!/usr/bin/env node
// The package bin. npm puts node_modules/.bin first on PATH for `npx platform` and npm scripts,
// so `env node` finds the pinned Node 24, which runs the TypeScript sources by type stripping.
import '../src/main.ts';
