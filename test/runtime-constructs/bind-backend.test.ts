import { describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  ApiServiceExportTemplate,
  BackendHttpRouteProps,
  BackendIngressProps,
  BindBackend,
  BindBackendProps,
  DEFAULT_IMAGES,
} from '../../constructs/runtime/index.js';
import { all, chart, expectHardened, expectNoWildcards, find, rulesFor, synth } from './_helpers.js';

const base: BindBackendProps = {
  oidc: { issuerUrl: 'https://bind.example.com/dex', clientId: 'klutch-backend', clientSecret: { name: 'oidc', key: 'client-secret' } },
  cookies: { signingKey: { name: 'cookies', key: 'signing' }, encryptionKey: { name: 'cookies', key: 'encryption' } },
  externalAddress: 'https://api.control-plane.example.com:6443',
  externalCa: { name: 'external-ca', key: 'ca.crt' },
};

const ingress: BackendIngressProps = { host: 'bind.example.com', className: 'nginx', tlsSecretName: 'bind-tls' };
const gatewayRoute: BackendHttpRouteProps = {
  hostnames: ['bind.example.com'],
  parentRefs: [{ name: 'eg', namespace: 'envoy-gateway-system', sectionName: 'https' }],
};

/** A backend exposed as `expose` says (default: through `ingress`), synthesized. */
function backend(props: Partial<BindBackendProps> = {}, expose: (b: BindBackend) => void = (b) => b.exposeViaIngress(ingress)) {
  const c = chart();
  const b = new BindBackend(c, 'B', { ...base, ...props });
  expose(b);
  return { b, objs: synth(c) };
}

describe('BindBackend', () => {
  test('credentialMaxLife: passed as --credential-max-life, checked against the minimum token and --token-ttl', () => {
    const args = (p: Partial<BindBackendProps>) => find(backend(p).objs, 'Deployment', 'klutch-backend').spec.template.spec.containers[0].args as string[];
    expect(args({}).some((a) => a.startsWith('--credential-max-life'))).toBe(false); // the backend's default: 30 days
    expect(args({ credentialMaxLife: Duration.days(7) })).toContain('--credential-max-life=604800s');
    expect(args({ credentialMaxLife: Duration.hours(2), extraArgs: ['--token-ttl=1h'] })).toContain('--credential-max-life=7200s');
    expect(() => backend({ credentialMaxLife: Duration.minutes(5) })).toThrow(
      'BindBackendProps.credentialMaxLife: "300s" must be whole seconds, at least 10 minutes (the shortest token Kubernetes issues)',
    );
    expect(() => backend({ credentialMaxLife: Duration.millis(600_500) })).toThrow(/BindBackendProps.credentialMaxLife: "600.5s" must be whole seconds/);
    expect(() => backend({ credentialMaxLife: Duration.hours(2) })).toThrow(/is shorter than the backend's default --token-ttl \(24h\)/);
    expect(() => backend({ credentialMaxLife: Duration.days(7), extraArgs: ['--credential-max-life=1h'] })).toThrow(
      /extraArgs\[0\]: "--credential-max-life=1h" sets --credential-max-life, which BindBackendProps.credentialMaxLife sets too/,
    );
    expect(() => backend({ credentialMaxLife: 86400 as never })).toThrow(/must be a cdk8s Duration/);
  });

  test('flags compatible with Klutch, secrets only by reference', () => {
    const { objs } = backend();
    const dep = find(objs, 'Deployment', 'klutch-backend');
    expect(dep.metadata.namespace).toBe('klutch-system');
    const ctr = dep.spec.template.spec.containers[0];
    expect(ctr.image).toBe(DEFAULT_IMAGES.backend);
    expect(ctr.args).toEqual(
      expect.arrayContaining([
        '--listen-address=0.0.0.0:8080',
        '--namespace-prefix=cluster',
        '--pretty-name=klutch-kit',
        '--consumer-scope=Namespaced',
        '--oidc-issuer-url=https://bind.example.com/dex',
        '--oidc-issuer-client-id=klutch-backend',
        '--oidc-issuer-client-secret=$(OIDC_CLIENT_SECRET)',
        '--oidc-callback-url=https://bind.example.com/callback',
        '--cookie-signing-key=$(COOKIE_SIGNING_KEY)',
        '--cookie-encryption-key=$(COOKIE_ENCRYPTION_KEY)',
        '--external-address=https://api.control-plane.example.com:6443',
        '--external-ca-file=/etc/klutch/external-ca/ca.crt',
      ]),
    );
    const env = Object.fromEntries(ctr.env.map((e: any) => [e.name, e]));
    expect(env.OIDC_CLIENT_SECRET.valueFrom.secretKeyRef).toEqual({ name: 'oidc', key: 'client-secret' });
    expect(env.COOKIE_SIGNING_KEY.valueFrom.secretKeyRef).toEqual({ name: 'cookies', key: 'signing' });
    expect(env.COOKIE_ENCRYPTION_KEY.valueFrom.secretKeyRef).toEqual({ name: 'cookies', key: 'encryption' });
    for (const e of ctr.env) expect(e.value).toBeUndefined(); // nothing inlined
    expect(all(objs, 'Secret')).toHaveLength(0); // the construct never writes a Secret
    expect(dep.spec.template.spec.volumes.find((v: any) => v.name === 'external-ca').secret.secretName).toBe('external-ca');
    expect(ctr.livenessProbe.httpGet.path).toBe('/healthz');
    expect(ctr.readinessProbe.httpGet.path).toBe('/readyz');
    expectHardened(dep);
  });

  test('oidc.issuerCa: the issuer CA from a ConfigMap, mounted read-only and trusted via NODE_EXTRA_CA_CERTS', () => {
    const plain = find(backend().objs, 'Deployment', 'klutch-backend').spec.template.spec;
    expect(plain.containers[0].env.some((e: any) => e.name === 'NODE_EXTRA_CA_CERTS')).toBe(false);
    const { objs } = backend({ oidc: { ...base.oidc, issuerCa: { configMap: 'dex-ca', key: 'ca.crt' } } });
    const pod = find(objs, 'Deployment', 'klutch-backend').spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'issuer-ca', configMap: { name: 'dex-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'issuer-ca', mountPath: '/etc/klutch/issuer-ca', readOnly: true });
    expect(pod.containers[0].env).toContainEqual({ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/klutch/issuer-ca/ca.crt' });
  });

  test('HA by default: 2 replicas spread over nodes, a PodDisruptionBudget, Leases for login states', () => {
    const { b, objs } = backend();
    const dep = find(objs, 'Deployment', 'klutch-backend');
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.template.spec.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: dep.spec.selector.matchLabels } },
    ]);
    const pdb = find(objs, 'PodDisruptionBudget', 'klutch-backend');
    expect(b.podDisruptionBudget).toBeDefined();
    expect(pdb.metadata.namespace).toBe('klutch-system');
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: dep.spec.selector.matchLabels } });
    // used login states are Leases (created, listed, deleted after expiry) next to the leader-election Lease
    const lease = find(objs, 'Role', 'klutch-backend-leader-election');
    expect(lease.rules[0].verbs).toEqual(expect.arrayContaining(['create', 'list', 'delete']));
    // one replica: no budget (it would block every drain), no spread
    const single = backend({ replicas: 1 });
    expect(all(single.objs, 'PodDisruptionBudget')).toHaveLength(0);
    expect(find(single.objs, 'Deployment', 'klutch-backend').spec.template.spec.topologySpreadConstraints).toBeUndefined();
    expect(all(backend({ podDisruptionBudget: false }).objs, 'PodDisruptionBudget')).toHaveLength(0);
    expect(() => backend({ podDisruptionBudget: 'yes' as never })).toThrow('BindBackendProps.podDisruptionBudget: "yes" must be true or false');
  });

  test('Service and Ingress route to the backend port', () => {
    const { objs } = backend();
    const svc = find(objs, 'Service', 'klutch-backend');
    const dep = find(objs, 'Deployment', 'klutch-backend');
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    expect(svc.spec.ports[0].targetPort).toBe('http');
    const ing = find(objs, 'Ingress');
    expect(ing.spec.ingressClassName).toBe('nginx');
    expect(ing.spec.tls).toEqual([{ hosts: ['bind.example.com'], secretName: 'bind-tls' }]);
    expect(ing.spec.rules[0].http.paths[0].backend.service).toEqual({ name: 'klutch-backend', port: { name: 'http' } });
    expect(all(objs, 'HTTPRoute')).toHaveLength(0);
  });

  test('Gateway API HTTPRoute instead of Ingress', () => {
    const { b, objs } = backend({}, (x) => x.exposeViaHttpRoute(gatewayRoute));
    expect(b.httpRoute?.name).toBe('klutch-backend');
    expect(b.ingress).toBeUndefined();
    expect(all(objs, 'Ingress')).toHaveLength(0);
    const route = find(objs, 'HTTPRoute');
    expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(route.spec.parentRefs[0]).toMatchObject({ kind: 'Gateway', name: 'eg', namespace: 'envoy-gateway-system', sectionName: 'https' });
    expect(route.spec.rules[0].backendRefs[0]).toEqual({ name: 'klutch-backend', port: 80 });
    const args = find(objs, 'Deployment').spec.template.spec.containers[0].args;
    expect(args).toContain('--oidc-callback-url=https://bind.example.com/callback');
  });

  test('least-privilege RBAC: no cluster-admin, no wildcards, no escalate/bind, scoped TokenRequest', () => {
    const { b, objs } = backend({ exportedApis: [{ group: 'anynines.com', resource: 'postgresqlinstances' }] });
    expectNoWildcards(objs);
    const role = find(objs, 'ClusterRole', 'klutch-backend');
    const crb = find(objs, 'ClusterRoleBinding', 'klutch-backend');
    expect(crb.roleRef.name).toBe('klutch-backend');
    expect(crb.subjects).toEqual([{ kind: 'ServiceAccount', name: 'klutch-backend', namespace: 'klutch-system' }]);
    // every rule documents why it exists
    for (const r of b.rules) expect(r.why.length).toBeGreaterThan(10);
    // CRDs and templates: read only
    expect(rulesFor(role, 'apiextensions.k8s.io', 'customresourcedefinitions')[0].verbs).toEqual(['get', 'list', 'watch']);
    expect(rulesFor(role, 'example-backend.klutch.anynines.com', 'apiserviceexporttemplates')[0].verbs).toEqual(['get', 'list', 'watch']);
    // never escalate, bind, impersonate or deletecollection
    const verbs = role.rules.flatMap((r: any) => r.verbs);
    for (const v of ['escalate', 'bind', 'impersonate', 'deletecollection']) expect(verbs).not.toContain(v);
    // TokenRequest only for the binder service account
    expect(rulesFor(role, '', 'serviceaccounts/token')).toEqual([
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: ['klutch-binder'] },
    ]);
    // consumer scope Namespaced: ClusterRoleBindings can only be read and removed, never created
    expect(rulesFor(role, 'rbac.authorization.k8s.io', 'clusterrolebindings')[0].verbs).toEqual(['get', 'delete']);
    expect(rulesFor(role, 'rbac.authorization.k8s.io', 'rolebindings')[0].verbs).toContain('create');
    expect(rulesFor(role, 'rbac.authorization.k8s.io', 'clusterroles')[0].verbs).toContain('create');
    // the binding API
    for (const r of ['apiserviceexportrequests', 'apiserviceexports', 'apiservicenamespaces', 'clusterbindings']) {
      expect(rulesFor(role, 'klutch.anynines.com', r)).toHaveLength(1);
      expect(rulesFor(role, 'klutch.anynines.com', `${r}/status`)).toHaveLength(1);
    }
    // its own role holds no rights on the exported objects: those come only through klutch-binder-exports
    expect(rulesFor(role, 'anynines.com', 'postgresqlinstances')).toHaveLength(0);
    const holds = find(objs, 'ClusterRoleBinding', 'klutch-backend-exports');
    expect(holds.roleRef.name).toBe('klutch-binder-exports');
    expect(holds.subjects[0]).toMatchObject({ name: 'klutch-backend', namespace: 'klutch-system' });
    // leases only in its own namespace
    const lease = find(objs, 'Role', 'klutch-backend-leader-election');
    expect(lease.metadata.namespace).toBe('klutch-system');
  });

  test('escalation prevention: the backend holds every permission of every role it hands out', () => {
    const { objs } = backend({
      exportedApis: [
        { group: 'anynines.com', resource: 'postgresqlinstances' },
        { group: 'anynines.com', resource: 'servicebindings' },
      ],
    });
    const own = find(objs, 'ClusterRole', 'klutch-backend').rules as any[];
    const agg = find(objs, 'ClusterRole', 'klutch-binder-exports').aggregationRule.clusterRoleSelectors[0].matchLabels;
    const aggregated = objs
      .filter((o) => o.kind === 'ClusterRole' && Object.entries(agg).every(([k, v]) => o.metadata.labels?.[k] === v))
      .flatMap((o) => o.rules);
    const held = [...own, ...aggregated];
    const holds = (g: string, r: string, v: string) =>
      held.some((h) => h.apiGroups.includes(g) && h.resources.includes(r) && h.verbs.includes(v) && !h.resourceNames);
    // klutch-binder, plus what a per-consumer klutch-binder-<clusterNs> contains: exports (+status) and claims, all verbs
    const handedOut = [
      ...find(objs, 'ClusterRole', 'klutch-binder').rules,
      {
        apiGroups: ['anynines.com'],
        resources: ['postgresqlinstances', 'postgresqlinstances/status', 'servicebindings', 'servicebindings/status'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ];
    for (const r of handedOut)
      for (const g of r.apiGroups)
        for (const res of r.resources)
          for (const v of r.verbs) {
            expect([g, res, v, holds(g, res, v)]).toEqual([g, res, v, true]);
          }
  });

  test('the klutch-binder role renders the contract rules, the role klutch-backend applies at start-up', async () => {
    const { binderPolicyRules, BINDER_RULES } = await import('../../contract/binder-rbac.js');
    const { binderClusterRole } = await import('../../runtime/backend/binder.js');
    const { b, objs } = backend();
    expect(b.binderRules).toBe(BINDER_RULES);
    expect(find(objs, 'ClusterRole', 'klutch-binder').rules).toEqual(binderPolicyRules());
    expect(find(objs, 'ClusterRole', 'klutch-binder').rules).toEqual(binderClusterRole().rules);
  });

  test("klutchKonnectorCompat: the Secret read Klutch's konnector needs, in the role and as the backend's flag", async () => {
    const { binderPolicyRules } = await import('../../contract/binder-rbac.js');
    const { binderClusterRole } = await import('../../runtime/backend/binder.js');
    const { objs } = backend({ klutchKonnectorCompat: true });
    const rules = find(objs, 'ClusterRole', 'klutch-binder').rules;
    expect(rules).toEqual(binderPolicyRules({ klutchKonnectorCompat: true }));
    expect(rules).toEqual(binderClusterRole({ klutchKonnectorCompat: true }).rules);
    expect(rules).toContainEqual({ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] });
    expect(find(objs, 'Deployment', 'klutch-backend').spec.template.spec.containers[0].args).toContain('--klutch-konnector-compat');
    // by default the consumer reads no Secret
    const plain = find(backend().objs, 'ClusterRole', 'klutch-binder').rules as Array<{ resources: string[]; verbs: string[] }>;
    expect(plain.filter((r) => r.resources.includes('secrets')).flatMap((r) => r.verbs)).toEqual(['delete']);
    expect(() => backend({ klutchKonnectorCompat: 'yes' as never })).toThrow('BindBackendProps.klutchKonnectorCompat: "yes" must be true or false');
  });

  test('binder roles: aggregated exports role with one role per exported API plus claims', () => {
    const { b } = backend({ exportedApis: [{ group: 'anynines.com', resource: 'postgresqlinstances' }] });
    b.addExportedApi({ group: 'anynines.com', resource: 'servicebindings' });
    b.addExportedApi({ group: 'anynines.com', resource: 'servicebindings' }); // idempotent
    const objs2 = synth(b.node.scope as any);
    const agg = find(objs2, 'ClusterRole', 'klutch-binder-exports');
    const sel = agg.aggregationRule.clusterRoleSelectors[0].matchLabels;
    const members = objs2.filter((o) => o.kind === 'ClusterRole' && Object.entries(sel).every(([k, v]) => o.metadata.labels?.[k] === v));
    expect(members.map((m) => m.metadata.name).sort()).toEqual([
      'klutch-binder-exports-claims',
      'klutch-binder-exports-postgresqlinstances.anynines.com',
      'klutch-binder-exports-servicebindings.anynines.com',
    ]);
    const pg = find(objs2, 'ClusterRole', 'klutch-binder-exports-postgresqlinstances.anynines.com');
    expect(pg.rules[0].resources).toEqual(['postgresqlinstances', 'postgresqlinstances/status']);
    expect(b.exportedApis).toHaveLength(2);
  });

  test('the export grants: api.grantBind(backend), an export made elsewhere imported by its API; the claims role from its claims', () => {
    const c = chart();
    const b = new BindBackend(c, 'B', base);
    b.exposeViaIngress(ingress);
    const made = new ApiServiceExportTemplate(c, 'Pg', { group: 'anynines.com', resource: 'postgresqlinstances' });
    made.grantBind(b);
    // made by another app: only its API is known here; granted after the backend, its claim still reaches the claims role
    const elsewhere = ApiServiceExportTemplate.fromBindableApi(c, 'Widgets', {
      group: 'widgets.example.com',
      resource: 'widgets',
      permissionClaims: [{ group: 'example.com', resource: 'tokens', version: 'v1' }],
    });
    elsewhere.grantBind(b);
    expect(b.exportedApis).toEqual([
      { group: 'anynines.com', resource: 'postgresqlinstances' },
      { group: 'widgets.example.com', resource: 'widgets' },
    ]);
    const objs = synth(c);
    expect(objs.filter((o) => o.kind === 'APIServiceExportTemplate').map((o) => o.metadata.name)).toEqual(['postgresqlinstances']); // the import emits nothing
    expect(find(objs, 'ClusterRole', 'klutch-binder-exports-widgets.widgets.example.com').rules[0].resources).toEqual(['widgets', 'widgets/status']);
    const claims = find(objs, 'ClusterRole', 'klutch-binder-exports-claims').rules as Array<{ apiGroups: string[]; resources: string[] }>;
    expect(claims.map((r) => [r.apiGroups[0], r.resources])).toEqual([
      ['', ['configmaps', 'secrets']],
      ['example.com', ['tokens']],
    ]);
    // claimedResources given: exactly those, whatever the exports claim
    const c2 = chart();
    const b2 = new BindBackend(c2, 'B', { ...base, claimedResources: [{ group: '', resource: 'secrets' }] });
    b2.exposeViaIngress(ingress);
    elsewhere.grantBind(b2);
    expect(find(synth(c2), 'ClusterRole', 'klutch-binder-exports-claims').rules.map((r: { resources: string[] }) => r.resources)).toEqual([['secrets']]);
    expect(() => ApiServiceExportTemplate.fromBindableApi(c, 'Bad', { group: 'Bad_Group', resource: 'widgets' })).toThrow(
      /ApiServiceExportTemplate\.fromBindableApi\(api\)\.group: "Bad_Group"/,
    );
  });

  test('consumer scope Cluster lets the backend manage per-consumer ClusterRoleBindings', () => {
    const { objs } = backend({ consumerScope: 'Cluster' });
    const role = find(objs, 'ClusterRole', 'klutch-backend');
    expect(rulesFor(role, 'rbac.authorization.k8s.io', 'clusterrolebindings')[0].verbs).toEqual(expect.arrayContaining(['create', 'patch', 'delete']));
    expect(find(objs, 'Deployment').spec.template.spec.containers[0].args).toContain('--consumer-scope=Cluster');
  });

  test('TLS serving mounts the certificate and probes over HTTPS', () => {
    const { objs } = backend({ tlsSecretName: 'backend-serving' });
    const ctr = find(objs, 'Deployment').spec.template.spec.containers[0];
    expect(ctr.args).toEqual(expect.arrayContaining(['--tls-cert-file=/etc/klutch/tls/tls.crt', '--tls-key-file=/etc/klutch/tls/tls.key']));
    expect(ctr.readinessProbe.httpGet.scheme).toBe('HTTPS');
    expect(find(objs, 'Service').spec.ports[0].port).toBe(443);
  });

  test.each([
    [{ oidc: { ...base.oidc, issuerUrl: 'not a url' } }, /BindBackendProps\.oidc\.issuerUrl: "not a url"/],
    [{ oidc: { ...base.oidc, issuerCa: { configMap: 'Bad_Name', key: 'ca.crt' } } }, /BindBackendProps\.oidc\.issuerCa\.configMap: "Bad_Name"/],
    [{ oidc: { ...base.oidc, issuerCa: { configMap: 'ca', key: 'a/b' } } }, /BindBackendProps\.oidc\.issuerCa\.key: "a\/b" is not a valid ConfigMap key/],
    [{ oidc: { ...base.oidc, clientId: '' } }, /BindBackendProps\.oidc\.clientId: ""/],
    [{ oidc: { ...base.oidc, clientSecret: { name: 'Bad_Name', key: 'k' } } }, /BindBackendProps\.oidc\.clientSecret\.name: "Bad_Name"/],
    [{ externalAddress: 'http://insecure:6443' }, /BindBackendProps\.externalAddress: "http:\/\/insecure:6443" must be an https URL/],
    [{ consumerScope: 'Everything' as any }, /BindBackendProps\.consumerScope: "Everything"/],
    [{ namespacePrefix: 'Cluster_' }, /BindBackendProps\.namespacePrefix: "Cluster_"/],
    [{ namespacePrefix: 'exports' }, /BindBackendProps\.namespacePrefix: "exports" would make per-consumer roles/],
    [{ image: 'ghcr.io/klutch-kit/backend:latest' }, /BindBackendProps\.image: "ghcr.io\/klutch-kit\/backend:latest"/],
    [{ replicas: 11 }, /BindBackendProps\.replicas: 11/],
    [{ exportedApis: [{ group: 'anynines.com', resource: 'PostgreSQL' }] }, /BindBackendProps\.exportedApis\[0\]\.resource: "PostgreSQL"/],
    [{ cookies: undefined as any }, /BindBackendProps\.cookies: undefined/],
  ])('bad props throw naming the prop and value (%#)', (props, msg) => {
    expect(() => backend(props as Partial<BindBackendProps>)).toThrow(msg);
  });
  test('without oidc.callbackUrl and without an exposure, synth names the callback URL', () => {
    expect(() => backend({}, () => undefined)).toThrow(
      /BindBackendProps\.oidc\.callbackUrl: undefined and no exposure; give a callback URL, or call exposeViaIngress\(\)/,
    );
    const { objs } = backend({ oidc: { ...base.oidc, callbackUrl: 'https://login.example.com/callback' } }, () => undefined);
    expect(find(objs, 'Deployment').spec.template.spec.containers[0].args).toContain('--oidc-callback-url=https://login.example.com/callback');
    expect(all(objs, 'Ingress')).toHaveLength(0);
    expect(all(objs, 'HTTPRoute')).toHaveLength(0);
  });

  test('Ingress and HTTPRoute together (a migration); the first exposure gives the callback host', () => {
    const { b, objs } = backend({}, (x) => {
      x.exposeViaHttpRoute({ ...gatewayRoute, hostnames: ['route.example.com'] });
      x.exposeViaIngress(ingress);
    });
    expect(find(objs, 'Ingress').spec.rules[0].host).toBe('bind.example.com');
    expect(find(objs, 'HTTPRoute').spec.hostnames).toEqual(['route.example.com']);
    expect(b.args).toContain('--oidc-callback-url=https://route.example.com/callback');
  });

  test.each([
    [(b: BindBackend) => b.exposeViaIngress({ host: 'Bind_Host' }), /BackendIngressProps\.host: "Bind_Host"/],
    [(b: BindBackend) => b.exposeViaIngress({ ...ingress, tlsSecretName: 'TLS!' }), /BackendIngressProps\.tlsSecretName: "TLS!"/],
    [(b: BindBackend) => b.exposeViaHttpRoute({ ...gatewayRoute, hostnames: [] }), /BackendHttpRouteProps\.hostnames: \[\] must list at least one host/],
    [(b: BindBackend) => b.exposeViaHttpRoute({ ...gatewayRoute, hostnames: ['ok.example.com', 'Not OK'] }), /BackendHttpRouteProps\.hostnames\[1\]: "Not OK"/],
    [(b: BindBackend) => b.exposeViaHttpRoute({ ...gatewayRoute, parentRefs: [] }), /BackendHttpRouteProps\.parentRefs: \[\] must name at least one Gateway/],
    [
      (b: BindBackend) => b.exposeViaHttpRoute({ ...gatewayRoute, parentRefs: [{ name: 'Gateway_1' }] }),
      /BackendHttpRouteProps\.parentRefs\[0\]\.name: "Gateway_1"/,
    ],
    [
      (b: BindBackend) => {
        b.exposeViaIngress(ingress);
        b.exposeViaIngress(ingress);
      },
      /BindBackend\.exposeViaIngress: "bind\.example\.com" cannot be added: test\/B already has the Ingress "klutch-backend"/,
    ],
    [
      (b: BindBackend) => {
        b.exposeViaHttpRoute(gatewayRoute);
        b.exposeViaHttpRoute(gatewayRoute);
      },
      /BindBackend\.exposeViaHttpRoute: \["bind\.example\.com"\] cannot be added: test\/B already has the HTTPRoute "klutch-backend"/,
    ],
  ])('bad exposures throw naming the option and value (%#)', (expose, msg) => {
    expect(() => backend({}, expose)).toThrow(msg);
  });
});

describe('BindBackend consumer isolation (consumerScope Cluster)', () => {
  test('renders a ValidatingAdmissionPolicy keeping each binder credential to its own cluster-scoped objects; none for Namespaced', () => {
    expect(backend().objs.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    const { b, objs } = backend({ consumerScope: 'Cluster', namespacePrefix: 'tenant' });
    const policy = find(objs, 'ValidatingAdmissionPolicy', 'klutch-binder-tenant-cluster-scoped-isolation');
    expect(b.consumerIsolation).toBeDefined();
    expect(find(objs, 'ValidatingAdmissionPolicyBinding', policy.metadata.name).spec).toEqual({
      policyName: policy.metadata.name,
      validationActions: ['Deny'],
    });
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Cluster' },
    ]);
    expect(policy.spec.matchConditions[0].expression).toBe(
      "request.userInfo.username.startsWith('system:serviceaccount:tenant-') && request.userInfo.username.endsWith(':klutch-binder')",
    );
    expect(policy.spec.variables).toEqual([{ name: 'ns', expression: "request.userInfo.username.split(':')[2]" }]);
    const exprs = policy.spec.validations.map((v: { expression: string }) => v.expression);
    expect(exprs[0]).toContain("oldObject.metadata.annotations['klutch.anynines.com/cluster-namespace'] == variables.ns");
    expect(exprs[1]).toContain("object.metadata.annotations['klutch.anynines.com/cluster-namespace'] == variables.ns");
    expect(exprs[2]).toBe("request.operation != 'CREATE' || object.metadata.name.startsWith(variables.ns + '-')");
  });
});
