// The catalogue page as a new user sees it: headless Chromium (Debian chromium via playwright-core)
// against the real backend, a real kube-apiserver and the real OIDC test provider. The provider
// serves the Klutch catalogue's PostgreSQL, Valkey (keyvalue) and ServiceBinding APIs: their export
// templates from the constructs, and the claim CRDs Crossplane would derive from the XRDs
// (derived by constructs/validate's stand-in of Crossplane's CRD generation: no Crossplane here).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Catalogue } from '../../../constructs/catalogue/index.js';
import { deriveClaimCrd } from '../../../constructs/validate/index.js';
import { responseRequests } from '../../../contract/wire.js';
import type { KubeObject } from '../../../runtime/core/index.js';
import { CallbackServer } from '../../../runtime/kubectl-bind/callback.js';
import { applyManifests, waitForCrdsEstablished } from '../../../runtime/realinfra/index.js';
import { startProvider, USERS, type ProviderEnv } from './_fixture.js';

jest.setTimeout(120_000);

let env: ProviderEnv;
let browser: Browser;
const [alice] = USERS;
// KLUTCH_DOCS_SCREENSHOTS=docs/images keeps the screenshots (docs/images/catalogue.png, catalogue-narrow.png).
const keep = process.env.KLUTCH_DOCS_SCREENSHOTS;
const shots = keep ?? mkdtempSync(join(tmpdir(), 'kk-catalogue-'));

beforeAll(async () => {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath))
    throw new Error(`${executablePath} not found: install Debian's chromium (listed in .ci/apt-packages.txt) or set CHROMIUM_PATH`);
  env = await startProvider('catalogue-page');
  const chart = new Chart(Testing.app(), 'c');
  new Catalogue(chart, 'Cat', { services: ['postgresql', 'keyvalue'], operations: ['servicebinding'] });
  const objs = Testing.synth(chart) as KubeObject[];
  const crds = objs.filter((o) => o.kind === 'CompositeResourceDefinition').map((x) => deriveClaimCrd(x as never) as unknown as KubeObject);
  await applyManifests(env.cluster.kubeConfig, crds as never[]);
  await waitForCrdsEstablished(
    env.cluster.kubeConfig,
    crds.map((c) => c.metadata.name!),
  );
  await applyManifests(env.cluster.kubeConfig, objs.filter((o) => o.kind === 'APIServiceExportTemplate') as never[]);
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await env?.stop();
  if (!keep) rmSync(shots, { recursive: true, force: true });
});

/** Logs alice in through the issuer's pages and returns the page on /resources. */
async function signIn(page: Page, cli: CallbackServer, s: string): Promise<void> {
  await page.goto(`${env.backend.url}/authorize?u=${encodeURIComponent(cli.url)}&s=${s}&c=catalogue`);
  await page.waitForSelector('#username');
  await page.fill('#username', alice.username);
  await page.fill('#password', alice.password);
  await Promise.all([page.waitForURL(`${env.backend.url}/resources?s=${s}`), page.click('#signin')]);
}

const visibleApis = (page: Page) =>
  page.$$eval('section.api', (els) => els.filter((e) => !(e as unknown as { hidden: boolean }).hidden).map((e) => e.getAttribute('data-resource')));

describe('catalogue page in headless Chromium', () => {
  it('shows plans with sizes, services, backends, parameters and an example claim; filters as you type; binds from the page', async () => {
    const s = randomBytes(4).toString('hex');
    const cli = new CallbackServer(s);
    await cli.start();
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    // A Content Security Policy refusal (of the script, or an invalid source) would show here.
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/.test(m.text())) errors.push(m.text());
    });
    try {
      await signIn(page, cli, s);
      await page.evaluate('document.getElementById("postgresqlinstances-anynines-com").scrollIntoView()');
      await page.screenshot({ path: join(shots, 'catalogue.png'), fullPage: false });
      expect(await visibleApis(page)).toEqual(
        expect.arrayContaining(['postgresqlinstances.anynines.com', 'keyvalueinstances.anynines.com', 'servicebindings.anynines.com', 'mangodbs.mangodb.com']),
      );
      await expect(page.textContent('#count')).resolves.toBe('5 APIs');

      // PostgreSQL: plans with sizes and flags, the backends, typed parameters, a valid example.
      const pg = page.locator('section[data-resource="postgresqlinstances.anynines.com"]');
      const planRows = await pg.locator('table').first().locator('tbody tr').allTextContents();
      expect(planRows.length).toBeGreaterThan(5);
      expect(planRows.some((r) => /ssl/.test(r) && /Gi/.test(r))).toBe(true);
      await expect(pg.locator('text=a8s-postgresql').first().isVisible()).resolves.toBe(true);
      await pg.locator('summary', { hasText: 'Parameters' }).click();
      await expect(pg.locator('code', { hasText: 'spec.plan' }).first().isVisible()).resolves.toBe(true);
      await pg.locator('summary', { hasText: 'Example claim' }).click();
      const example = await pg.locator('pre').textContent();
      expect(example).toMatch(/^apiVersion: anynines.com\/v1\nkind: PostgresqlInstance\n/);
      expect(example).toContain('compositionRef:');
      await expect(pg.locator('button.copy').isVisible()).resolves.toBe(true); // the script ran (CSP hash) and showed it

      // Filter as you type (several words must all match).
      await page.fill('#q', 'ssl keyvalue');
      expect(await visibleApis(page)).toEqual(['keyvalueinstances.anynines.com']);
      await expect(page.textContent('#count')).resolves.toBe('1 of 5 APIs match \u201cssl keyvalue\u201d');
      await page.fill('#q', 'a8s');
      expect((await visibleApis(page)).sort()).toEqual(['postgresqlinstances.anynines.com', 'servicebindings.anynines.com']);
      await page.fill('#q', 'no-such-thing');
      expect(await visibleApis(page)).toEqual([]);
      await page.fill('#q', '');
      expect((await visibleApis(page)).length).toBe(5);

      // Keyboard only: Tab from the filter box reaches the Filter button; Enter on a focused Bind button binds.
      await page.focus('#q');
      await page.keyboard.press('Tab');
      await expect(page.evaluate<string | null>('document.activeElement && document.activeElement.textContent')).resolves.toBe('Filter');
      await pg.locator('button[name="bind"]').focus();
      await Promise.all([page.waitForURL((u) => u.href.startsWith(cli.url)), page.keyboard.press('Enter')]);
      const r = await cli.response;
      expect(responseRequests(r).map((x) => x.metadata.name)).toEqual(['postgresqlinstances.anynines.com']);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await cli.stop();
    }
    expect(statSync(join(shots, 'catalogue.png')).size).toBeGreaterThan(10_000);
  });

  it('without JavaScript: every detail is in the page, the filter works as a form, on a narrow screen', async () => {
    const s = randomBytes(4).toString('hex');
    const cli = new CallbackServer(s);
    await cli.start();
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    try {
      await signIn(page, cli, s);
      // Details are in the HTML (collapsed <details> open without script).
      const kv = page.locator('section[data-resource="keyvalueinstances.anynines.com"]');
      await kv.locator('summary', { hasText: 'Example claim' }).click();
      await expect(kv.locator('pre').textContent()).resolves.toContain('kind: KeyvalueInstance');
      await expect(kv.locator('button.copy').isVisible()).resolves.toBe(false); // needs the script
      // Nothing is wider than the screen except inside the scrolling table boxes.
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      await page.fill('#q', 'backup manager nosuch');
      await Promise.all([page.waitForURL((u) => u.searchParams.get('q') === 'backup manager nosuch'), page.click('button[type="submit"]:has-text("Filter")')]);
      expect(await visibleApis(page)).toEqual([]);
      await expect(page.textContent('#count')).resolves.toBe('0 of 5 APIs match \u201cbackup manager nosuch\u201d');
      await page.fill('#q', 'servicebinding');
      await Promise.all([page.waitForURL((u) => u.searchParams.get('q') === 'servicebinding'), page.click('button[type="submit"]:has-text("Filter")')]);
      expect(await visibleApis(page)).toEqual(['servicebindings.anynines.com']);
      await page.screenshot({ path: join(shots, 'catalogue-narrow.png'), fullPage: false });
    } finally {
      await context.close();
      await cli.stop();
    }
  });
});
