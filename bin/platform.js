#!/usr/bin/env node
// The package bin, and what `npm start` runs. npm puts node_modules/.bin first on PATH for `npx platform`
// and npm scripts, so `env node` finds the pinned Node 24, which runs the TypeScript sources by type
// stripping. The compile cache keeps each module's stripped and compiled form on disk (under the system's
// temporary directory, or NODE_COMPILE_CACHE): from the second start on, Node neither loads its
// TypeScript stripper (a WebAssembly build of swc, about 18 MB resident) nor recompiles the sources.
// A cache that cannot be written is skipped, and the start goes on as without it.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('../src/main.ts');
