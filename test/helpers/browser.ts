// A real browser for the portal's tests: Debian's Chromium driven by playwright-core (CI installs it),
// axe-core run in the page as it is, and screenshots kept under test-results/portal/.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const SCREENSHOTS = new URL('../../test-results/portal/', import.meta.url).pathname;

export async function startBrowser(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  after(() => browser.close());
  mkdirSync(SCREENSHOTS, { recursive: true });
  return browser;
}

/** axe-core's serious and critical violations on the page (evaluated through DevTools, which the CSP allows). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then(({ violations }) =>
       violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))`,
  )) as { id: string; impact: string; nodes: number }[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.nodes})`);
}

export const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
