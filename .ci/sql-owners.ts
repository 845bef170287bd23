// Part of `npm run lint`: each table's statements live with its one owner. Reads every string and template
// literal of src/ (comments are not read) and fails on SQL that names a table outside the folder that owns
// it. The delivery tables (delivery_queue, deliveries, delivery_attempts) and the delivery engine's state
// on an endpoint (rate_next_at, dead_streak) belong to src/delivery-store/; an endpoint's settings stay with
// webhooks/ and are read there. The day totals and allowances (usage_daily, usage_quota) belong to
// src/usage/. Migrations, which make the tables, are not TypeScript and are not read.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

interface Owned {
  owner: string;
  /** what names the table in SQL: a word no English sentence has, or the word after an SQL keyword */
  pattern: RegExp;
  what: string;
}

const KEYWORD = String.raw`\b(?:from|into|update|join|using|table|truncate)\s+`;
const OWNED: Owned[] = [
  {
    owner: 'src/delivery-store/',
    pattern: /\b(?:delivery_queue|delivery_attempts)\b/i,
    what: 'a delivery table',
  },
  { owner: 'src/delivery-store/', pattern: new RegExp(`${KEYWORD}deliveries\\b`, 'i'), what: 'deliveries' },
  {
    owner: 'src/delivery-store/',
    pattern: /\b(?:rate_next_at|dead_streak)\b/,
    what: 'the delivery engine’s state on an endpoint',
  },
  { owner: 'src/usage/', pattern: /\b(?:usage_daily|usage_quota)\b/, what: 'a usage table' },
];

/** Every .ts file under `dir`. */
function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesOf(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The text of each string and template literal of a file, with its line. */
function literalsOf(file: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    )
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const root = path.resolve(import.meta.dirname, '..');
const problems: string[] = [];
for (const file of filesOf(path.join(root, 'src'))) {
  const relative = path.relative(root, file);
  for (const { line, text } of literalsOf(file))
    for (const rule of OWNED)
      if (!relative.startsWith(rule.owner) && rule.pattern.test(text))
        problems.push(
          `${relative}:${line}: SQL names ${rule.what} (${text.match(rule.pattern)?.[0]}); its statements live in ${rule.owner}`,
        );
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  console.error(`${problems.length} statements outside their table's owner`);
  process.exit(1);
}
