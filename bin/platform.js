#!/usr/bin/env node
// The package bin, and what `npm start` runs. npm puts node_modules/.bin first on PATH for `npx platform`
// and npm scripts, so `env node` finds the pinned Node 24, which runs the TypeScript sources by type
// stripping. Run by an older Node (the machine's own, or after `npm ci --omit=dev`, which leaves the
// pinned one out), it says so and stops, before loading anything that Node could not run.
//
// The compile cache keeps each module's stripped and compiled form on disk (under the system's temporary
// directory, or NODE_COMPILE_CACHE): from the second start on, Node neither loads its TypeScript
// stripper (a WebAssembly build of swc, about 18 MB resident) nor recompiles the sources. A cache that
// cannot be written is skipped, and the start goes on as without it.
const NEEDED = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major < NEEDED) {
  console.error(
    `platform: platform-core needs Node.js ${NEEDED} or newer; this is Node ${process.versions.node} (${process.execPath}).\n` +
      `Run it through npm after \`npm ci\`, which brings Node ${NEEDED} (\`npm start\`, \`npx platform …\`), ` +
      `or install Node ${NEEDED} (https://nodejs.org/en/download).`,
  );
  process.exit(1);
}

// The young generation of a long-running process. V8 sizes its ceiling by the machine's memory (32 MB a
// semi-space on 24 GiB), a start's compiling grows it to that ceiling, and it stays resident though idle:
// 64 MB of a 187 MB process. At 8 MB the idle process is about 139 MB, and the API spent less CPU a
// request, not more (bench/RESULTS.md, 2026-11-25). Node reads the flag only at start, so the process
// replaces itself once with it (execve: the same pid and stdio). A size the caller chose, in NODE_OPTIONS
// or on the command line, is kept. Node aborts if execve fails: it is tried only while the Node running
// this is still on disk.
const SEMI_SPACE_MB = 8;
const LONG_RUNNING = new Set(['start', 'dev', 'serve', 'worker']);
const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((flag) =>
  /--max[-_]semi[-_]space[-_]size/.test(flag),
);
if (LONG_RUNNING.has(process.argv[2]) && !chosen && typeof process.execve === 'function') {
  const { existsSync } = await import('node:fs');
  if (existsSync(process.execPath)) {
    const flags = [`--max-semi-space-size=${SEMI_SPACE_MB}`, ...process.execArgv];
    process.execve(process.execPath, [process.execPath, ...flags, ...process.argv.slice(1)]);
  }
}
// A .env file in the working directory (cp .env.example .env) holds local settings; a variable already in
// the environment wins over it. No file, no change.
try {
  process.loadEnvFile('.env');
} catch (error) {
  if (error?.code !== 'ENOENT') throw error;
}
const { enableCompileCache } = await import('node:module');
enableCompileCache();
await import('../src/main.ts');
