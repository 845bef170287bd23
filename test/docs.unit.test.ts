// The documentation stands alone and stays true: the README is a map a newcomer reads in ten minutes
// (at most 250 lines); every link in it, in docs/ and in bench/README.md resolves inside the repository,
// anchors included; docs/api.md names every error code the service can answer. No database.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ERROR_CATALOGUE } from '../src/lib/errors.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const markdown = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(path.join(ROOT, file)).isDirectory()) return markdown(file);
    return name.endsWith('.md') ? [file] : [];
  });
const FILES = ['README.md', 'bench/README.md', ...markdown('docs')];

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

const anchorsOf = (file: string) =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => anchorOf(line.replace(/^#+ /, ''))),
  );

describe('the documentation', () => {
  test('the README is at most 250 lines', () => {
    const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length;
    assert.ok(lines <= 250, `${lines} lines`);
  });

  test('every link resolves inside the repository, anchors included; none points outside it', () => {
    const broken: string[] = [];
    for (const file of FILES) {
      const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^(https?:|mailto:)/.test(target)) continue;
        const [where = '', anchor] = target.split('#');
        const resolved = where
          ? path.resolve(path.dirname(path.join(ROOT, file)), where)
          : path.join(ROOT, file);
        if (!resolved.startsWith(ROOT) || !existsSync(resolved)) broken.push(`${file}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${file}: ${target} (no such heading)`);
      }
      if (/\.\.\/shared|CONTRACT\.md|DESIGN\.md/.test(text)) broken.push(`${file}: points outside`);
    }
    assert.deepEqual(broken, []);
  });

  test('docs/api.md names every error code', () => {
    const api = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    const missing = Object.keys(ERROR_CATALOGUE).filter((code) => !api.includes(`\`${code}\``));
    assert.deepEqual(missing, []);
  });
});
