// What the portal's screen tests share (portal-screens and portal-endpoint-screens): a service with a
// worker, Chromium, receivers (one answers 204, one fails for a project until it is healed, one stays
// paused), a project made for each language and width with a declared type and three endpoints, and the
// checks every screen meets (no sideways page, axe clean, saved).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { contrast } from '../../web/portal/src/colours.ts';
import { en, type MessageKey } from '../../web/portal/src/i18n/en.ts';
import { fr } from '../../web/portal/src/i18n/fr.ts';
import { startService, type Tenant } from './app.ts';
import { accessibilityViolations, screenshot, startBrowser } from './browser.ts';
import { eventually, startReceiver } from './receiver.ts';

export const service = await startService({
  env: { PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '100', PLATFORM_RETRY_SCHEDULE: '0' },
  worker: true,
});
export const operator = await service.operator();
export const browser = await startBrowser();
let n = 0;
export const idem = () => ({ 'idempotency-key': `portal-screens-${++n}` });
export const WIDTHS = [390, 1280] as const;
export const LANGUAGES = ['en', 'fr'] as const;
export type Language = (typeof LANGUAGES)[number];
const CATALOGUES = { en, fr };
/** A message as the portal shows it in that language, its parameters filled in. */
export const say = (language: Language, key: MessageKey, params: Record<string, string | number> = {}) =>
  CATALOGUES[language][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name]));

// Receivers shared by every project: one answers 204, one fails for a project until it is healed, one
// stays paused. Each project has its own path on them, so projects made at once do not meet.
export const good = await startReceiver();
export const healed = new Set<string>();
export const flaky = await startReceiver((received, _index, response) =>
  response.writeHead(healed.has(received.path) ? 204 : 500).end(),
);
export const held = await startReceiver();

/**
 * A project in English and French (in the given theme), with a declared type (schema and example), an
 * endpoint for pay.* that delivers, one for * whose two deliveries are dead, one paused holding two.
 */
export async function fixture(theme: Record<string, string> = { primary: '#1D4ED8' }) {
  const tenant = await service.tenant();
  const patched = await service.request('PATCH', `/admin/v1/projects/${tenant.projectId}`, {
    key: operator.key,
    headers: { ...idem(), 'content-type': 'application/merge-patch+json' },
    body: { languages: ['en', 'fr'], theme },
  });
  assert.equal(patched.status, 200, patched.text);
  const api = (method: string, path: string, body?: unknown) =>
    service.request(method, path, { key: tenant.key, headers: idem(), body });
  await api('PUT', '/core/v1/event-types/pay.payment.succeeded', {
    description: 'A payment was captured',
    schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
    example: { amount: 4200 },
  });
  const create = async (url: string, eventTypes: string[]) =>
    (await api('POST', '/core/v1/webhook-endpoints', { url, eventTypes })).body.id as string;
  const goodId = await create(`${good.url}/good`, ['pay.*']);
  // Its own path on the flaky receiver, as long as the one every project shared (the screens are measured
  // at 360 px with this URL in them).
  const flakyUrl = `${flaky.url}/f${tenant.projectId.slice(0, 4)}`;
  const flakyId = await create(flakyUrl, ['*']);
  const heldId = await create(`${held.url}/held`, ['*']);
  await api('POST', `/core/v1/webhook-endpoints/${heldId}/pause`);
  await api('POST', '/core/v1/events', { type: 'pay.payment.succeeded', data: { amount: 4200 } });
  await api('POST', '/core/v1/events', { type: 'shop.order.placed', data: { order: 7 } });
  const deliveries = async (id: string) =>
    (await api('GET', `/core/v1/webhook-endpoints/${id}/deliveries`)).body.data as {
      state: string;
      eventType: string;
    }[];
  await eventually(async () => {
    const states = (await deliveries(flakyId)).map((d) => d.state);
    return states.length === 2 && states.every((state) => state === 'dead');
  });
  /** The flaky receiver answers this project's deliveries 204 from now on. */
  const heal = () => healed.add(new URL(flakyUrl).pathname);
  return { tenant, api, goodId, flakyId, flakyUrl, heldId, deliveries, heal };
}
export type Fixture = Awaited<ReturnType<typeof fixture>>;

export async function open(tenant: Tenant, width: number, language: Language, path = '/portal/') {
  const minted = await service.request('POST', '/core/v1/portal-sessions', {
    key: tenant.key,
    headers: idem(),
    body: { language },
  });
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(minted.body.url);
  await page.locator('main h1').waitFor();
  if (path !== '/portal/') {
    await page.evaluate(
      `history.pushState(null, '', '${path}'); dispatchEvent(new PopStateEvent('popstate'))`,
    );
  }
  return { page, problems };
}

/** No sideways page, no serious or critical axe finding, and the screen saved. */
export async function check(page: Page, name: string, width: number) {
  const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
  assert.ok(scrollWidth <= width, `${name}: the page is ${scrollWidth} px wide at ${width}`);
  assert.deepEqual(await accessibilityViolations(page), [], `axe on ${name}`);
  await screenshot(page, name);
}

/** Each badge's label against its fill (4.5:1) and its fill against the page (3:1), as rendered. */
export async function badgeContrasts(page: Page) {
  const rendered = (await page.evaluate(`[...document.querySelectorAll('.badge')].map((badge) => {
      const hex = (rgb) => '#' + rgb.match(/\\d+/g).slice(0, 3).map((c) => Number(c).toString(16).padStart(2, '0')).join('');
      const style = getComputedStyle(badge);
      return { text: badge.textContent, label: hex(style.color), fill: hex(style.backgroundColor),
               page: hex(getComputedStyle(document.body).backgroundColor) };
    })`)) as { text: string; label: string; fill: string; page: string }[];
  assert.ok(rendered.length > 0, 'badges are shown');
  for (const badge of rendered) {
    assert.ok(contrast(badge.label, badge.fill) >= 4.5, `${badge.text}: label ${JSON.stringify(badge)}`);
    assert.ok(
      contrast(badge.fill, badge.page) >= 3,
      `${badge.text}: fill on the page ${JSON.stringify(badge)}`,
    );
  }
  return rendered;
}

/** Runs an action once per language and width, each on a project of its own, all at once. */
export async function everywhere(
  action: (f: Fixture, language: Language, width: number, name: string) => Promise<void>,
) {
  const combinations = WIDTHS.flatMap((width) => LANGUAGES.map((language) => [width, language] as const));
  await Promise.all(
    combinations.map(async ([width, language]) =>
      action(await fixture(), language, width, `${width}-${language}`),
    ),
  );
}
