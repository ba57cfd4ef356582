// What kubectl-bind checks and shows before it writes anything: the resource policy applied to an
// export request, the consent text of each claim, the konnector's RBAC capped to the allow-list, and
// the URLs it sends a login or token over / opens in a browser.
import { describe, expect, it } from '@jest/globals';
import type { PermissionClaim } from '../../../contract/wire.js';
import { askConsent, installedAllowances, konnectorGrants } from '../../../runtime/kubectl-bind/apiservice.js';
import { browserCommand, fetchProvider, authorizeUrl } from '../../../runtime/kubectl-bind/bind.js';
import { checkRequest, claimDetails, describeClaim, parseAllowResources } from '../../../runtime/kubectl-bind/consent.js';
import { checkSecureUrl, parseRemoteKubeconfig } from '../../../runtime/kubectl-bind/util.js';
import { run } from '../../../runtime/kubectl-bind/main.js';
import { io } from './_io.js';
import { konnectorManifests } from '../../../constructs/runtime/index.js';

const DAEMONSETS_CLAIM: PermissionClaim = {
  group: 'apps',
  resource: 'daemonsets',
  version: 'v1',
  selector: { owner: 'Provider' },
  create: { replaceExisting: true },
};
const hostile = {
  spec: { resources: [{ group: 'apps', resource: 'daemonsets', permissionClaims: [DAEMONSETS_CLAIM] }] },
};

describe('the resource policy on an export request', () => {
  it('refuses a request for apps/daemonsets with a claim on daemonsets.apps: both named, each with the flag; exit code 5', () => {
    let err: unknown;
    try {
      checkRequest(hostile, []);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 5 });
    const msg = (err as Error).message;
    expect(msg).toMatch(/^the export request names resources this cluster does not let a provider touch; nothing was created:\n/);
    expect(msg).toContain('  - the export of daemonsets.apps is outside the allow-list: workloads run code');
    expect(msg).toContain('  - the permission claim on daemonsets.apps is outside the allow-list: workloads run code');
    expect(msg.match(/allow it with --allow-resource daemonsets\.apps/g)).toHaveLength(2);
  });

  it('passes it with --allow-resource daemonsets.apps; never passes RBAC, flag or not', () => {
    const d = checkRequest(hostile, parseAllowResources(['daemonsets.apps']));
    expect(d.map((x) => [x.use, x.name, x.allowedByName])).toEqual([
      ['export', 'daemonsets.apps', true],
      ['claim', 'daemonsets.apps', true],
    ]);
    const rbac = {
      spec: {
        resources: [
          { group: 'anynines.com', resource: 'things', permissionClaims: [{ group: 'rbac.authorization.k8s.io', resource: 'roles', version: 'v1' }] },
        ],
      },
    };
    expect(() => checkRequest(rbac, [])).toThrow(/the permission claim on roles\.rbac\.authorization\.k8s\.io is never allowed: RBAC/);
    expect(() => parseAllowResources(['roles.rbac.authorization.k8s.io'])).toThrow(
      expect.objectContaining({ code: 2, message: expect.stringMatching(/^--allow-resource: "roles\.rbac\.authorization\.k8s\.io" can never be allowed/) }),
    );
  });

  it("a Klutch-style request (the provider's API, a claim on its service-binding Secrets) passes without flags", () => {
    const req = {
      spec: {
        resources: [
          {
            group: 'anynines.com',
            resource: 'postgresqlinstances',
            permissionClaims: [{ group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' as const } }],
          },
        ],
      },
    };
    expect(checkRequest(req, []).every((d) => d.allowed && !d.allowedByName)).toBe(true);
  });
});

describe('the consent text', () => {
  it('lists every option that writes into the app cluster and flags the dangerous ones', () => {
    const c: PermissionClaim = {
      group: '',
      resource: 'secrets',
      version: 'v1',
      selector: { names: ['*-service-binding'], namespaces: ['team-a'], labelSelectors: [{ app: 'db' }], fieldSelectors: ['type=Opaque'], owner: 'Provider' },
      create: { replaceExisting: true },
      update: { alwaysRecreate: true, preserving: ['data.password'], labels: [{ pattern: 'example.com/*' }] },
      onConflict: { recreateWhenConsumerSideDeleted: false },
      read: { annotations: [{ pattern: 'team/*' }] },
    };
    expect(claimDetails(c)).toEqual([
      'selector.names: *-service-binding',
      'selector.namespaces: team-a',
      'selector.labelSelectors: {"app":"db"}',
      'selector.fieldSelectors: type=Opaque',
      'selector.owner: Provider',
      '⚠️  create.replaceExisting: true — an object of the same name your team created is replaced by the provider’s',
      'update.alwaysRecreate: true — changed copies are deleted and created again',
      'update.preserving: data.password — kept as they are in the target on updates',
      'update.labels: example.com/*',
      'onConflict.recreateWhenConsumerSideDeleted: false — a copy you delete stays deleted until the provider changes it',
      'read.annotations: team/* — read from your objects by the provider',
    ]);
    // a claim on every Secret your namespaces hold, copied to the provider
    const up: PermissionClaim = { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Consumer' } };
    expect(claimDetails(up)).toEqual([
      'selector.names: * (default) — every object of the resource',
      'selector.namespaces: * (default) — every namespace you bind',
      '⚠️  selector.owner: Consumer — every secrets object in the namespaces you bind is copied to the provider; narrow it with names or selectors',
      'onConflict.recreateWhenConsumerSideDeleted: true — a copy you delete is created again',
    ]);
    expect(describeClaim({ group: '', resource: 'configmaps', version: 'v1' })).toBe('configmaps created on either side (synced both ways)');
  });

  it('--yes prints the claim with its options and the warnings', async () => {
    const t = io();
    await askConsent([DAEMONSETS_CLAIM], { yes: true, io: t.io }, 'daemonsets.apps');
    expect(t.err()).toContain('✅ accepted permission claim of daemonsets.apps: daemonsets.apps created by the provider (synced into your cluster) (--yes)\n');
    expect(t.err()).toContain('     ⚠️  create.replaceExisting: true');
  });
});

describe("the konnector's RBAC", () => {
  it('covers only bound APIs and claims within the allow-list; the rest is named in a warning', () => {
    const warnings: string[] = [];
    const scope = {
      bound: [
        { group: 'anynines.com', resource: 'postgresqlinstances' },
        { group: 'apps', resource: 'daemonsets' },
      ],
      claimed: [
        { group: '', resource: 'secrets' },
        { group: 'apps', resource: 'daemonsets' },
      ],
    };
    const g = konnectorGrants(scope, [], (w) => warnings.push(w));
    expect(g.boundApis).toEqual([{ group: 'anynines.com', resources: ['postgresqlinstances'] }]);
    expect(g.claimedResources).toEqual([
      { group: '', resource: 'secrets' },
      { group: '', resource: 'configmaps' },
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^⚠️ {2}APIServiceBinding daemonsets\.apps: outside the allow-list .*; the konnector gets no rights on it — delete the binding, or bind again with --allow-resource daemonsets\.apps\n$/,
      ),
      expect.stringMatching(/^⚠️ {2}accepted claim on daemonsets\.apps: outside the allow-list/),
    ]);
    // with the allowance: exactly those rules more
    const allowed = konnectorGrants(scope, [{ group: 'apps', resource: 'daemonsets' }], () => undefined);
    // the ClusterRoles: the cluster-wide one (bound APIs) and the one bound in each allowed namespace (claims)
    const role = (gr: typeof g, allowedResources: string[]) =>
      konnectorManifests({ ...gr, allowedResources })
        .filter((m) => m.kind === 'ClusterRole')
        .flatMap((m) => m.rules) as Array<{ apiGroups: string[]; resources: string[] }>;
    const apps = role(allowed, ['daemonsets.apps']).filter((r) => r.apiGroups.includes('apps'));
    expect(apps.map((r) => r.resources)).toEqual([['daemonsets', 'daemonsets/status'], ['daemonsets']]);
    expect(role(g, []).some((r) => r.apiGroups.includes('apps'))).toBe(false);
  });

  it("reads the installed konnector's allowances from its --allow-resource flags, ignoring what can never be allowed", () => {
    const warnings: string[] = [];
    expect(
      installedAllowances(['--lease-name=x', '--allow-resource=daemonsets.apps', '--allow-resource=roles.rbac.authorization.k8s.io'], (w) => warnings.push(w)),
    ).toEqual([{ group: 'apps', resource: 'daemonsets' }]);
    expect(warnings).toEqual([
      expect.stringMatching(/ignoring the installed konnector's --allow-resource=roles\.rbac\.authorization\.k8s\.io: .*can never be allowed/),
    ]);
  });
});

describe('URLs', () => {
  it('refuses plain http except on loopback, naming the URL and what to do', () => {
    for (const ok of ['https://bind.example.com/export', 'http://127.0.0.1:8080/export', 'http://[::1]:1/x', 'http://localhost:9/x']) {
      expect(checkSecureUrl('the export URL', ok).href).toBe(new URL(ok).href);
    }
    expect(() => checkSecureUrl('the export URL', 'http://bind.example.com/export')).toThrow(
      expect.objectContaining({
        code: 2,
        message: expect.stringMatching(/^the export URL http:\/\/bind\.example\.com\/export is plain http: .*--token.*; use the backend's https:\/\/ URL/),
      }),
    );
    expect(() => checkSecureUrl('-f', 'ftp://x/y')).toThrow(/only https URLs are supported/);
    expect(() => authorizeUrl('http://10.0.0.1/authorize', { callbackUrl: 'http://127.0.0.1:1/callback', port: 1, sessionId: 's', clusterId: 'c' })).toThrow(
      /the provider's authenticatedURL http:\/\/10\.0\.0\.1\/authorize is plain http/,
    );
    const kubeconfig = (server: string) =>
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: d, context: {cluster: c, user: u, namespace: n}}]\ncurrent-context: d\n`;
    expect(() => parseRemoteKubeconfig(kubeconfig('http://10.0.0.1:6443'))).toThrow(/the provider kubeconfig's server http:\/\/10\.0\.0\.1:6443 is plain http/);
    expect(parseRemoteKubeconfig(kubeconfig('https://10.0.0.1:6443')).server).toBe('https://10.0.0.1:6443');
  });

  it('kubectl bind refuses an http export URL before it connects (exit 2)', async () => {
    await expect(fetchProvider('http://bind.example.com/export')).rejects.toMatchObject({ code: 2 });
    const t = io();
    expect(await run(['http://bind.example.com/export', '--kubeconfig', '/nonexistent'], t.io, {})).toBe(2);
    expect(t.err()).toMatch(/plain http/);
  });

  it('--open runs no shell: rundll32 on Windows, open/xdg-open elsewhere, the URL one argument; only http(s)', () => {
    const url = 'https://bind.example.com/authorize?c=a&p=1&s=x|calc';
    expect(browserCommand(url, 'win32')).toEqual({ cmd: 'rundll32', args: ['url.dll,FileProtocolHandler', new URL(url).href] });
    expect(browserCommand(url, 'darwin')).toEqual({ cmd: 'open', args: [new URL(url).href] });
    expect(browserCommand(url, 'linux')).toEqual({ cmd: 'xdg-open', args: [new URL(url).href] });
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'ms-settings:', 'not a url']) {
      expect(() => browserCommand(bad, 'win32')).toThrow(/^--open: /);
    }
  });
});
