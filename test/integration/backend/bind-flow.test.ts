// The whole login → bind flow over HTTP (no browser) against a real provider cluster and a real OIDC
// provider, plus the refusals: each one asserted with nothing created on the provider.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../runtime/core/index.js';
import { parseKubeconfig } from '../../../runtime/core/kubeconfig.js';
import { eventually } from '../../realinfra/util.js';
import { responseKubeconfig, responseRequests } from '../../../contract/wire.js';
import { FetchBrowser } from '../../support/oidc-provider.js';
import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CallbackServer } from '../../../runtime/kubectl-bind/callback.js';
import {
  BACKEND_RESOURCE,
  CLIENT_ID,
  MACHINE_ID,
  MACHINE_SECRET,
  USERS,
  clickBind,
  clusterNamespaces,
  loginViaHttp,
  responseFromCallback,
  startProvider,
  type ProviderEnv,
} from './_fixture.js';

jest.setTimeout(120_000);

let env: ProviderEnv;
const [alice, bob] = USERS;
const sid = () => randomBytes(4).toString('hex');

beforeAll(async () => {
  env = await startProvider('bind-flow');
}, 180_000);
afterAll(async () => {
  await env?.stop();
});

const ns = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
const secrets = { group: '', version: 'v1', plural: 'secrets', namespaced: true };
const mangos = { group: 'mangodb.com', version: 'v1alpha1', plural: 'mangodbs', namespaced: true, kind: 'MangoDB' };

describe('browser flow over HTTP', () => {
  it('logs in with PKCE, lists the catalogue, binds, and answers only to the loopback callback', async () => {
    const s = sid();
    const login = await loginViaHttp(env, alice, { port: 41234, s, c: 'clusterA' });
    expect(login.resourcesUrl).toBe(`${env.backend.url}/resources?s=${s}`);
    expect(login.resourcesHtml).toContain('Signed in as alice@example.test');
    expect(login.resourcesHtml).toContain('data-resource="mangodbs.mangodb.com"');
    expect(login.resourcesHtml).toContain('data-resource="widgets.example.klutch.test"');
    expect(login.resourcesHtml).toContain('also grants access to: secrets');
    // the authorize request to the issuer carried PKCE S256 and a nonce
    const authReq = login.browser.visited.find((v) => v.includes('/auth?'))!;
    const q = new URL(authReq.split(' ')[1]).searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('nonce')!.length).toBeGreaterThanOrEqual(32);
    // the state is sealed: a JWE with 5 parts, no readable redirect URL
    expect(q.get('state')!.split('.')).toHaveLength(5);
    expect(q.get('state')).not.toContain('41234');

    const bind = await clickBind(env, login, 'mangodbs.mangodb.com');
    expect(bind.status).toBe(303);
    expect(bind.location!.startsWith('http://localhost:41234/callback?response=')).toBe(true); // Klutch's CLI sends only p=<port>
    const r = responseFromCallback(bind.location!);
    // Klutch's CLI decodes the parameter with Go's strict base64.StdEncoding: padded standard alphabet
    const param = new URL(bind.location!).searchParams.get('response')!;
    expect(param).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(param.length % 4).toBe(0);
    expect(r.authentication?.oauth2CodeGrant).toEqual({ sid: s, id: `${env.op.issuer}/${alice.sub}` });
    const reqs = responseRequests(r);
    expect(reqs).toHaveLength(1);
    expect(reqs[0].metadata.name).toBe('mangodbs.mangodb.com');
    expect(reqs[0].spec.resources[0]).toMatchObject({
      group: 'mangodb.com',
      resource: 'mangodbs',
      permissionClaims: [expect.objectContaining({ resource: 'secrets' })],
    });

    // what /bind created on the provider
    const kc = new KubeConfig();
    kc.loadFromString(responseKubeconfig(r));
    const clusterNs = kc.getContextObject(kc.getCurrentContext())!.namespace!;
    expect(clusterNs).toMatch(/^cluster-[0-9a-f]{12}$/);
    const nsObj = await env.kube.get(ns, undefined, clusterNs);
    expect(nsObj.metadata.annotations).toMatchObject({
      'example-backend.klutch.anynines.com/identity': `${alice.sub}#clusterA`,
      'example-backend.klutch.anynines.com/issuer': env.op.issuer,
    });
    const cb = await env.kube.get({ group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'clusterbindings', namespaced: true }, clusterNs, 'cluster');
    expect(cb.spec).toEqual({ kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'Test Provider' });
    await env.kube.get({ group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true }, clusterNs, 'klutch-binder');
    // no legacy token Secret; the kubeconfig Secret carries a TokenRequest token with an expiry, bound
    // to the credential Secret (deleting it revokes the token)
    const secretList = await env.kube.list(secrets, clusterNs);
    expect(secretList.items.map((x) => x.metadata.name).sort()).toEqual(['credential', 'kubeconfig']);
    const kubeconfigSecret = secretList.items.find((x) => x.metadata.name === 'kubeconfig')!;
    expect(kubeconfigSecret.type).toBe('Opaque');
    const exp = Date.parse(kubeconfigSecret.metadata.annotations!['klutch.anynines.com/token-expiration']);
    expect(exp - Date.now()).toBeGreaterThan(23 * 3600_000);
    const token = kc.getCurrentUser()!.token!;
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { exp: number; sub: string };
    expect(claims.sub).toBe(`system:serviceaccount:${clusterNs}:klutch-binder`);
    expect(Math.abs(claims.exp * 1000 - exp)).toBeLessThan(5000);
    // the handed-out kubeconfig works against the real API server, inside its namespace only
    const consumer = new KubeClient(kc);
    try {
      const reqList = await consumer.list(
        { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexportrequests', namespaced: true },
        clusterNs,
      );
      expect(reqList.items).toEqual([]);
      await expect(consumer.list(secrets, 'kube-system')).rejects.toMatchObject({ code: 403 });
    } finally {
      consumer.close();
    }
  });

  it('re-binding is idempotent: same namespace, no duplicates, a fresh token', async () => {
    const before = await clusterNamespaces(env.kube);
    const l1 = await loginViaHttp(env, bob, { port: 41000, s: sid(), c: 'clusterB' });
    const r1 = responseFromCallback((await clickBind(env, l1, 'widgets.example.klutch.test')).location!);
    const l2 = await loginViaHttp(env, bob, { port: 41001, s: sid(), c: 'clusterB' });
    const r2 = responseFromCallback((await clickBind(env, l2, 'widgets.example.klutch.test')).location!);
    const ns1 = /namespace: (\S+)/.exec(responseKubeconfig(r1))![1];
    const ns2 = /namespace: (\S+)/.exec(responseKubeconfig(r2))![1];
    expect(ns2).toBe(ns1);
    expect(responseKubeconfig(r2)).not.toBe(responseKubeconfig(r1)); // new token
    // the re-bind revoked the first bind's token at once (within the API server's 10 s token cache); the new one works
    const k1 = new KubeClient(parseKubeconfig(responseKubeconfig(r1)));
    const k2 = new KubeClient(parseKubeconfig(responseKubeconfig(r2)));
    const cbRef = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'clusterbindings', namespaced: true };
    try {
      await eventually(
        "the first bind's token refused (401)",
        () =>
          k1.get(cbRef, ns1, 'cluster').then(
            () => false,
            (e: { code?: number }) => e.code === 401,
          ),
        { timeoutMs: 30_000 },
      );
      expect((await k2.get(cbRef, ns1, 'cluster')).metadata.name).toBe('cluster');
    } finally {
      k1.close();
      k2.close();
    }
    const after = await clusterNamespaces(env.kube);
    expect(after.filter((n) => !before.includes(n))).toEqual([ns1]);
    // another cluster of the same user gets its own namespace
    const l3 = await loginViaHttp(env, bob, { port: 41002, s: sid(), c: 'clusterB2' });
    const r3 = responseFromCallback((await clickBind(env, l3, 'widgets.example.klutch.test')).location!);
    expect(/namespace: (\S+)/.exec(responseKubeconfig(r3))![1]).not.toBe(ns1);
  });
});

describe('non-interactive binding (CI)', () => {
  it('a client-credentials JWT for the backend audience gets the same BindingResponse, without a browser', async () => {
    const { access_token } = await env.op.clientCredentials(MACHINE_ID, MACHINE_SECRET, { resource: BACKEND_RESOURCE, scope: 'bind' });
    const res = await fetch(`${env.backend.url}/bind`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID: 'ci-cluster' }),
    });
    expect(res.status).toBe(200);
    const r = (await res.json()) as ReturnType<typeof responseFromCallback>;
    expect(r.kind).toBe('BindingResponse');
    expect(r.authentication?.oauth2CodeGrant?.id).toBe(`${env.op.issuer}/${MACHINE_ID}`);
    expect(responseKubeconfig(r)).toContain('token: ');
  });

  it('an id_token of the issuer for our client works as bearer', async () => {
    const now = Math.floor(Date.now() / 1000);
    const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub: 'robot-1', aud: CLIENT_ID, iat: now, exp: now + 300 });
    const res = await fetch(`${env.backend.url}/bind`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tok}` },
      body: JSON.stringify({ group: 'example.klutch.test', resource: 'widgets', clusterID: 'robot-cluster' }),
    });
    expect(res.status).toBe(200);
  });
});

describe('refusals (nothing is created)', () => {
  const bearerBind = (token: string, body: object = { group: 'mangodb.com', resource: 'mangodbs', clusterID: 'evil' }) =>
    fetch(`${env.backend.url}/bind`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: JSON.stringify(body) });

  async function expectRefused(res: Response, status: number, field: string, text: RegExp, before: string[]) {
    expect(res.status).toBe(status);
    const body = (await res.json()) as { error: string; field: string };
    expect(body.field).toBe(field);
    expect(body.error).toMatch(text);
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  }

  it('forged signature, expired token, wrong audience, wrong issuer, garbage', async () => {
    const before = await clusterNamespaces(env.kube);
    const now = Math.floor(Date.now() / 1000);
    const good = { iss: env.op.issuer, sub: 'mallory', aud: CLIENT_ID, iat: now, exp: now + 300 };
    await expectRefused(await bearerBind(await env.op.signForged(good)), 401, 'Authorization', /signature does not verify/, before);
    await expectRefused(await bearerBind(await env.op.signAsIssuer({ ...good, iat: now - 7200, exp: now - 3600 })), 401, 'Authorization', /expired/, before);
    const other = await env.op.clientCredentials(MACHINE_ID, MACHINE_SECRET, { resource: 'urn:other:api', scope: 'read' });
    await expectRefused(await bearerBind(other.access_token), 401, 'Authorization', /audience is not one of/, before);
    await expectRefused(await bearerBind(await env.op.signAsIssuer({ ...good, aud: 'other-app' })), 401, 'Authorization', /audience/, before);
    await expectRefused(await bearerBind(await env.op.signAsIssuer({ ...good, iss: 'https://evil.example' })), 401, 'Authorization', /"iss"/, before);
    await expectRefused(await bearerBind('not-a-jwt'), 401, 'Authorization', /not a JWS/, before);
    // valid token, bad input
    const ok = await env.op.signAsIssuer(good);
    await expectRefused(await bearerBind(ok, { group: 'mangodb.com', resource: 'mangodbs', clusterID: 'bad id!' }), 400, 'clusterID', /"bad id!"/, before);
    await expectRefused(await bearerBind(ok, { group: 'nope.io', resource: 'things', clusterID: 'c1' }), 400, 'resource', /not offered/, before);
  });

  it('a non-loopback redirect is refused before anything happens', async () => {
    const before = await clusterNamespaces(env.kube);
    for (const u of [
      'https://evil.example/callback',
      'http://10.0.0.1:8080/cb',
      'http://127.0.0.1.evil.example:80/cb',
      'http://user@127.0.0.1:9/cb',
      'javascript:alert(1)',
    ]) {
      const res = await fetch(`${env.backend.url}/authorize?u=${encodeURIComponent(u)}&s=abc&c=def`, {
        redirect: 'manual',
        headers: { Accept: 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { field: string }).field).toBe('u');
    }
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  });

  it('a replayed state is refused', async () => {
    const browser = new FetchBrowser();
    const s = sid();
    let callback = '';
    const first = await browser.request(`${env.backend.url}/authorize?p=40000&s=${s}&c=replay`);
    const login = await browser.follow(first.headers.get('location')!);
    await browser.signIn(login.url, await login.res!.text(), alice, (l) => {
      if (l.startsWith(`${env.backend.url}/callback`)) callback = l;
      return l.startsWith(`${env.backend.url}/callback`);
    });
    // the browser's login cookie, sent with both attempts: only the state's single use can refuse the second
    const cookie = browser.cookieHeader(new URL(callback));
    expect(cookie).toContain(`klutch-bind-auth-${s}=`);
    const ok = await fetch(callback, { redirect: 'manual', headers: { Cookie: cookie } });
    expect(ok.status).toBe(302);
    const before = await clusterNamespaces(env.kube);
    const res = await fetch(callback, { redirect: 'manual', headers: { Cookie: cookie, Accept: 'application/json' } });
    expect(res.status).toBe(400);
    expect((await res.json()) as object).toEqual({ field: 'state', error: 'state: was already used; start again with kubectl bind' });
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  });

  it('a tampered state, a state from another browser, a wrong nonce: refused', async () => {
    const before = await clusterNamespaces(env.kube);
    // tampered: flip one character of the sealed state on its way back
    {
      const browser = new FetchBrowser();
      const first = await browser.request(`${env.backend.url}/authorize?p=40001&s=${sid()}&c=tamper`);
      const login = await browser.follow(first.headers.get('location')!);
      let callback = '';
      await browser.signIn(login.url, await login.res!.text(), alice, (l) => (callback = l).startsWith(`${env.backend.url}/callback`));
      const u = new URL(callback);
      const st = u.searchParams.get('state')!;
      const i = st.length - 10;
      u.searchParams.set('state', st.slice(0, i) + (st[i] === 'A' ? 'B' : 'A') + st.slice(i + 1));
      const res = await browser.request(u.href, { headers: { Accept: 'application/json' } });
      expect(res.status).toBe(400);
      expect((await res.json()) as object).toMatchObject({ field: 'state', error: expect.stringMatching(/cannot be decrypted|invalid/) });
    }
    // another browser (no login cookie): the state is bound to the browser that started the login
    {
      const browser = new FetchBrowser();
      const first = await browser.request(`${env.backend.url}/authorize?p=40002&s=${sid()}&c=steal`);
      const login = await browser.follow(first.headers.get('location')!);
      let callback = '';
      await browser.signIn(login.url, await login.res!.text(), alice, (l) => (callback = l).startsWith(`${env.backend.url}/callback`));
      const res = await fetch(callback, { redirect: 'manual', headers: { Accept: 'application/json' } });
      expect(res.status).toBe(400);
      expect((await res.json()) as object).toMatchObject({ field: 'state', error: expect.stringMatching(/not issued to this browser/) });
    }
    // wrong nonce: the browser swaps the nonce of the authorization request; the issuer puts it in the id_token
    {
      const browser = new FetchBrowser();
      const first = await browser.request(`${env.backend.url}/authorize?p=40003&s=${sid()}&c=nonce`);
      const authUrl = new URL(first.headers.get('location')!);
      authUrl.searchParams.set('nonce', 'attacker-chosen-nonce-0123456789abcdef');
      const login = await browser.follow(authUrl.href);
      let callback = '';
      await browser.signIn(login.url, await login.res!.text(), alice, (l) => (callback = l).startsWith(`${env.backend.url}/callback`));
      const res = await browser.request(callback, { headers: { Accept: 'application/json' } });
      expect(res.status).toBe(401);
      expect((await res.json()) as object).toEqual({ field: 'id_token.nonce', error: expect.stringContaining('nonce') });
    }
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  });

  it('/bind without a session or with a wrong CSRF token is refused', async () => {
    const before = await clusterNamespaces(env.kube);
    const s = sid();
    const login = await loginViaHttp(env, alice, { port: 40004, s, c: 'csrf' });
    const res = await login.browser.request(`${env.backend.url}/bind`, {
      method: 'POST',
      form: { s, csrf: 'guess', group: 'mangodb.com', resource: 'mangodbs' },
      headers: { Accept: 'application/json' },
    });
    expect(res.status).toBe(403);
    const anon = await fetch(`${env.backend.url}/bind`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: `s=${s}&csrf=x&group=mangodb.com&resource=mangodbs`,
    });
    expect(anon.status).toBe(401);
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  });
});

describe('RBAC between consumers (real API server)', () => {
  it("consumer A's kubeconfig gets 403 on consumer B's namespaces and objects", async () => {
    const bindAs = async (user: typeof alice, c: string) => {
      const l = await loginViaHttp(env, user, { port: 40100, s: sid(), c });
      const r = responseFromCallback((await clickBind(env, l, 'mangodbs.mangodb.com')).location!);
      const kc = new KubeConfig();
      kc.loadFromString(responseKubeconfig(r));
      return { kc, ns: kc.getContextObject(kc.getCurrentContext())!.namespace!, r };
    };
    const a = await bindAs(alice, 'rbacA');
    const b = await bindAs(bob, 'rbacB');
    const ka = new KubeClient(a.kc);
    const kb = new KubeClient(b.kc);
    const svcNs = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiservicenamespaces', namespaced: true, kind: 'APIServiceNamespace' };
    const reqs = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexportrequests', namespaced: true, kind: 'APIServiceExportRequest' };
    try {
      // each consumer requests the export and a service namespace, as the konnector/CLI would
      for (const [k, x] of [
        [ka, a],
        [kb, b],
      ] as const) {
        await k.create(reqs, { metadata: { name: 'mangodbs.mangodb.com', namespace: x.ns }, spec: responseRequests(x.r)[0].spec });
        await k.create(svcNs, { metadata: { name: 'default', namespace: x.ns } });
      }
      const provA = `${a.ns}-default`;
      const provB = `${b.ns}-default`;
      await eventually(
        'both consumers can create mangodbs in their provider namespace',
        async () => {
          await ka.create(mangos, { metadata: { name: 'a-db', namespace: provA }, spec: { tier: 'Shared' } }).catch((e) => {
            if (!String(e).includes('AlreadyExists')) throw e;
          });
          await kb.create(mangos, { metadata: { name: 'b-db', namespace: provB }, spec: { tier: 'Shared' } }).catch((e) => {
            if (!String(e).includes('AlreadyExists')) throw e;
          });
          return true;
        },
        { timeoutMs: 30_000 },
      );
      // A on B's objects and namespaces: forbidden by the real RBAC
      await expect(ka.get(mangos, provB, 'b-db')).rejects.toMatchObject({ code: 403 });
      await expect(ka.list(mangos, provB)).rejects.toMatchObject({ code: 403 });
      await expect(ka.create(mangos, { metadata: { name: 'x', namespace: provB }, spec: {} })).rejects.toMatchObject({ code: 403 });
      await expect(ka.list(secrets, provB)).rejects.toMatchObject({ code: 403 });
      await expect(ka.list(reqs, b.ns)).rejects.toMatchObject({ code: 403 });
      await expect(ka.get({ group: '', version: 'v1', plural: 'secrets', namespaced: true }, b.ns, 'kubeconfig')).rejects.toMatchObject({ code: 403 });
      await expect(kb.get(mangos, provA, 'a-db')).rejects.toMatchObject({ code: 403 });
      // and A keeps its own rights (exported + claimed resources in its own provider namespace)
      expect((await ka.get(mangos, provA, 'a-db')).metadata.name).toBe('a-db');
      expect((await ka.list(secrets, provA)).items).toBeDefined();
      // no ClusterRoleBinding for consumers in Namespaced scope
      const crbs = await env.kube.list({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', namespaced: false });
      expect(crbs.items.filter((c) => c.metadata.name!.startsWith('klutch-binder'))).toEqual([]);
      // the per-consumer ClusterRole covers exactly the exported and claimed resources
      const role = await env.kube.get(
        { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', namespaced: false },
        undefined,
        `klutch-binder-${a.ns}`,
      );
      expect(role.rules).toEqual([
        { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
        { apiGroups: ['mangodb.com'], resources: ['mangodbs', 'mangodbs/status'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
      ]);
    } finally {
      ka.close();
      kb.close();
    }
  });
});

describe('health and metrics', () => {
  it('serves /healthz, /readyz and Prometheus /metrics', async () => {
    expect((await fetch(`${env.backend.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${env.backend.url}/readyz`)).status).toBe(200);
    const m = await (await fetch(`${env.backend.url}/metrics`)).text();
    expect(m).toMatch(/klutch_backend_binds_total\{flow="browser",result="ok"\} \d+/);
    expect(m).toMatch(/klutch_backend_auth_failures_total\{field="Authorization"\} \d+/);
    const exp = (await (await fetch(`${env.backend.url}/export`)).json()) as {
      apiVersion: string;
      providerPrettyName: string;
      authenticationMethods: Array<{ oauth2CodeGrant: { authenticatedURL: string } }>;
    };
    // version >= v0.3.0, or Klutch's released kubectl-bind refuses the provider
    expect(exp).toMatchObject({ apiVersion: 'v1alpha1', kind: 'BindingProvider', providerPrettyName: 'Test Provider', version: 'v1.5.0' });
    expect(exp.authenticationMethods[0].oauth2CodeGrant.authenticatedURL).toBe(`${env.backend.url}/authorize`);
  });
});

describe('headless Chromium (Debian chromium via playwright-core)', () => {
  it('logs in on the issuer page, sees the catalogue, clicks Bind, lands on the CLI callback', async () => {
    const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (!existsSync(executablePath))
      throw new Error(`${executablePath} not found: install Debian's chromium (listed in .ci/apt-packages.txt) or set CHROMIUM_PATH`);
    const s = sid();
    const cli = new CallbackServer(s); // the same loopback callback kubectl-bind runs
    await cli.start();
    const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    try {
      const page = await browser.newPage();
      await page.goto(`${env.backend.url}/authorize?u=${encodeURIComponent(cli.url)}&s=${s}&c=chromium`);
      await page.waitForSelector('#username');
      expect(page.url().startsWith(env.op.issuer + '/interaction/')).toBe(true);
      await page.fill('#username', alice.username);
      await page.fill('#password', alice.password);
      await Promise.all([page.waitForURL(`${env.backend.url}/resources?s=${s}`), page.click('#signin')]);
      await expect(page.textContent('h1')).resolves.toBe('Test Provider');
      expect(await page.locator('section.api').count()).toBeGreaterThanOrEqual(2);
      await Promise.all([page.waitForURL((u) => u.href.startsWith(cli.url)), page.click('button[value="mangodbs.mangodb.com"]')]);
      await expect(page.textContent('h1')).resolves.toBe('Authenticated');
      const r = await cli.response;
      expect(r.authentication?.oauth2CodeGrant).toEqual({ sid: s, id: `${env.op.issuer}/${alice.sub}` });
      expect(responseRequests(r)[0].metadata.name).toBe('mangodbs.mangodb.com');
      // the cookies the backend set are HttpOnly
      const cookies = await page.context().cookies(env.backend.url);
      expect(cookies.filter((c) => c.name.startsWith('klutch-bind')).every((c) => c.httpOnly && c.sameSite === 'Lax')).toBe(true);
    } finally {
      await browser.close();
      await cli.stop();
    }
  });
});

describe('the klutch-backend binary', () => {
  const repo = fileURLToPath(new URL('../../../', import.meta.url));
  const start = (args: string[]) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'runtime/backend/main.ts', ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    setTimeout(() => child.kill('SIGKILL'), 100_000).unref();
    return { child, exited, out: () => out, err: () => err };
  };

  it('exits 2 naming the flag on bad flags', async () => {
    const p = start(['--oidc-issuer-client-id=x', '--kubeconfig', env.cluster.kubeconfigPath]);
    expect(await p.exited).toBe(2);
    expect(p.err()).toContain('--oidc-issuer-url: required');
  });

  it('serves health, readiness and metrics, logs JSON, leader-elects, and stops on SIGTERM', async () => {
    const p = start([
      '--kubeconfig',
      env.cluster.kubeconfigPath,
      '--listen-address=127.0.0.1:0',
      `--oidc-issuer-url=${env.op.issuer}`,
      `--oidc-issuer-client-id=${CLIENT_ID}`,
      '--lease-namespace=kube-system',
    ]);
    try {
      const { eventually } = await import('../../realinfra/util.js');
      const url = await eventually(
        'the serving log line',
        async () => {
          const line = p
            .out()
            .split('\n')
            .find((l) => l.includes('klutch-backend serving'));
          return line ? (JSON.parse(line) as { url: string; level: string }).url : undefined;
        },
        { timeoutMs: 90_000 },
      ).catch((e: Error) => {
        throw new Error(`${e.message}\n--- stdout ---\n${p.out()}\n--- stderr ---\n${p.err()}`);
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      await eventually(
        'ready, leading, controllers synced',
        async () => {
          const r = await fetch(`${url}/readyz`);
          const t = await r.text();
          return r.status === 200 && t.includes('role: leader') && t.includes('\ncontrollers: ok\n');
        },
        { timeoutMs: 30_000 },
      );
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain('klutch_backend_process_cpu_seconds_total');
      expect(metrics).toContain('klutch_backend_http_requests_total');
      const lease = await env.kube.get({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true }, 'kube-system', 'klutch-backend');
      expect(lease.spec).toBeDefined();
      expect(p.out()).toMatch(/"level":"warn".*no --cookie-signing-key/);
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited).toBe(0);
  });
});

describe('TLS', () => {
  it('serves https with --tls-cert-file/--tls-key-file and marks cookies Secure', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const https = await import('node:https');
    const { createClusterPki } = await import('../../../runtime/realinfra/pki.js');
    const { startBackend } = await import('../../../runtime/backend/app.js');
    const { parseBackendOptions } = await import('../../../runtime/backend/options.js');
    const { silentLogger } = await import('../../../runtime/core/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'bind-tls-'));
    const pki = await createClusterPki(dir, 'bind-tls');
    const b = await startBackend(
      parseBackendOptions([
        '--listen-address=127.0.0.1:0',
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-key-file=${pki.servingKey}`,
        `--oidc-issuer-url=${env.op.issuer}`,
        `--oidc-issuer-client-id=${CLIENT_ID}`,
        '--no-controllers',
      ]),
      { kubeConfig: env.cluster.kubeConfig, logger: silentLogger },
    );
    const get = (path: string) =>
      new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
        https
          .get(`${b.url}${path}`, { ca: pki.caPem }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          })
          .on('error', reject);
      });
    try {
      expect(b.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const exp = await get('/export');
      expect(exp.status).toBe(200);
      expect(JSON.parse(exp.body).authenticationMethods[0].oauth2CodeGrant.authenticatedURL).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/authorize$/);
      const auth = await get(`/authorize?p=40500&s=${sid()}&c=tls`);
      expect(auth.status).toBe(302);
      expect(new URL(auth.headers.location as string).searchParams.get('redirect_uri')).toBe(`${b.url}/callback`);
      expect(String(auth.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Lax; Secure/);
    } finally {
      await b.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
