import { describe, expect, test } from '@jest/globals';
import { DEFAULT_IMAGES, Konnector, konnectorManifests, KonnectorNamespaces } from '../../constructs/runtime/index.js';
import { all, chart, expectHardened, expectNoWildcards, find, rulesFor, synth } from './_helpers.js';

const bound = [{ group: 'anynines.com', resources: ['postgresqlinstances', 'servicebindings'] }];

describe('Konnector', () => {
  test('namespace klutch-bind, service account, 2 replicas with leader election and probes', () => {
    const c = chart();
    new Konnector(c, 'K', { boundApis: bound });
    const objs = synth(c);
    expect(find(objs, 'Namespace').metadata.name).toBe('klutch-bind');
    const sa = find(objs, 'ServiceAccount');
    expect(sa.metadata).toMatchObject({ name: 'konnector', namespace: 'klutch-bind' });
    const dep = find(objs, 'Deployment');
    expect(dep.metadata.namespace).toBe('klutch-bind');
    expect(dep.spec.replicas).toBe(2);
    const pod = dep.spec.template.spec;
    expect(pod.serviceAccountName).toBe('konnector');
    const ctr = pod.containers[0];
    expect(ctr.image).toBe(DEFAULT_IMAGES.konnector);
    expect(ctr.args).toEqual(expect.arrayContaining(['--lease-name=klutch-bind', '--lease-namespace=$(POD_NAMESPACE)', '--health-address=0.0.0.0:8080']));
    expect(ctr.env.map((e: any) => e.name)).toEqual(expect.arrayContaining(['POD_NAME', 'POD_NAMESPACE']));
    expect(ctr.livenessProbe.httpGet.path).toBe('/healthz');
    expect(ctr.readinessProbe.httpGet.path).toBe('/readyz');
    expect(ctr.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(ctr.livenessProbe.httpGet.port).toBe('http');
    expectHardened(dep);
    // the pod selector matches the pod labels and the PDB keeps one replica
    expect(pod).toBeDefined();
    expect(dep.spec.template.metadata.labels).toMatchObject(dep.spec.selector.matchLabels);
    expect(find(objs, 'PodDisruptionBudget').spec.minAvailable).toBe(1);
    const svc = find(objs, 'Service');
    expect(svc.spec.ports[0]).toMatchObject({ name: 'metrics', targetPort: 'http' });
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
  });

  test('RBAC covers exactly the bound APIs, claimed secrets/configmaps, bindings and its own lease', () => {
    const c = chart();
    new Konnector(c, 'K', { boundApis: bound, namespaces: KonnectorNamespaces.all() });
    const objs = synth(c);
    expectNoWildcards(objs);
    const role = find(objs, 'ClusterRole');
    const binding = find(objs, 'ClusterRoleBinding');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'konnector', namespace: 'klutch-bind' }]);
    // bound resources and their status
    const pg = rulesFor(role, 'anynines.com', 'postgresqlinstances');
    expect(pg).toHaveLength(1);
    expect(pg[0].resources).toEqual(expect.arrayContaining(['postgresqlinstances/status', 'servicebindings', 'servicebindings/status']));
    expect(pg[0].verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']));
    // no other API group than the bound one, core, CRDs, binding API, events
    const groups = new Set(role.rules.flatMap((r: any) => r.apiGroups));
    expect([...groups].sort()).toEqual(['', 'anynines.com', 'apiextensions.k8s.io', 'events.k8s.io', 'klutch.anynines.com']);
    // CRD mutation only on the bound CRDs
    const crdWrite = role.rules.find((r: any) => r.resources.includes('customresourcedefinitions') && r.verbs.includes('update'));
    expect(crdWrite.resourceNames.sort()).toEqual([
      'apiservicebindings.klutch.anynines.com',
      'postgresqlinstances.anynines.com',
      'servicebindings.anynines.com',
    ]);
    // secrets: explicit verbs, never a wildcard
    const secrets = rulesFor(role, '', 'secrets');
    expect(secrets).toHaveLength(1);
    expect(secrets[0].verbs).not.toContain('deletecollection');
    // bindings are read and their status written, never created
    const asb = rulesFor(role, 'klutch.anynines.com', 'apiservicebindings')[0];
    expect(asb.verbs).not.toContain('create');
    // leases: namespaced Role, update limited to the lease name
    const leaseRole = find(objs, 'Role');
    expect(leaseRole.metadata.namespace).toBe('klutch-bind');
    const upd = leaseRole.rules.find((r: any) => r.verbs.includes('update'));
    expect(upd.resourceNames).toEqual(['klutch-bind']);
    expect(find(objs, 'RoleBinding').roleRef.name).toBe(leaseRole.metadata.name);
    expect(find(objs, 'Deployment').spec.template.spec.containers[0].args).toContain('--all-namespaces');
  });

  test('no bound API → no data-service group in the RBAC', () => {
    const c = chart();
    new Konnector(c, 'K');
    const role = find(synth(c), 'ClusterRole');
    expect(role.rules.some((r: any) => r.apiGroups.includes('anynines.com'))).toBe(false);
  });

  test('image, replicas and lease name are props', () => {
    const c = chart();
    new Konnector(c, 'K', { image: 'registry.example/konnector:9.9.9', replicas: 1, leaseName: 'my-lease', createNamespace: false });
    const objs = synth(c);
    expect(all(objs, 'Namespace')).toHaveLength(0);
    expect(all(objs, 'PodDisruptionBudget')).toHaveLength(0);
    const dep = find(objs, 'Deployment');
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.template.spec.containers[0].image).toBe('registry.example/konnector:9.9.9');
    expect(dep.spec.template.spec.containers[0].args).toContain('--lease-name=my-lease');
  });

  test.each([
    [{ image: 'konnector:latest' }, /KonnectorProps\.image: "konnector:latest"/],
    [{ image: 'konnector' }, /KonnectorProps\.image: "konnector" must be pinned/],
    [{ replicas: 0 }, /KonnectorProps\.replicas: 0/],
    [{ namespace: 'Klutch_Bind' }, /KonnectorProps\.namespace: "Klutch_Bind"/],
    [{ boundApis: [{ group: 'Bad Group', resources: ['x'] }] }, /KonnectorProps\.boundApis\[0\]\.group: "Bad Group"/],
    [{ boundApis: [{ group: 'anynines.com', resources: [] }] }, /KonnectorProps\.boundApis\[0\]\.resources: \[\]/],
    [{ boundApis: [{ group: '', resources: ['secrets'] }] }, /KonnectorProps\.boundApis\[0\]\.group: ""/],
    [{ resources: { cpuRequest: '2', cpuLimit: '1', memoryRequest: '1Mi', memoryLimit: '2Mi' } }, /KonnectorProps\.resources\.cpuRequest: "2" is greater/],
    [{ extraArgs: ['-v'] }, /KonnectorProps\.extraArgs\[0\]: "-v"/],
  ])('bad props throw naming the prop and value: %j', (props, msg) => {
    expect(() => new Konnector(chart(), 'K', props as any)).toThrow(msg);
  });

  test('allowedMetadataKeys: passed to the konnector as --allow-label-key / --allow-annotation-key (none by default)', () => {
    const argsOf = (props: object) => {
      const c = chart();
      new Konnector(c, 'K', { boundApis: bound, ...props });
      return find(synth(c), 'Deployment').spec.template.spec.containers[0].args as string[];
    };
    expect(argsOf({}).filter((a) => a.startsWith('--allow-label-key') || a.startsWith('--allow-annotation-key'))).toEqual([]);
    const args = argsOf({ allowedMetadataKeys: { labels: ['example.com/team', 'tier', 'tier'], annotations: ['example.com/*'] } });
    expect(args.filter((a) => a.startsWith('--allow-label-key') || a.startsWith('--allow-annotation-key'))).toEqual([
      '--allow-label-key=example.com/team',
      '--allow-label-key=tier',
      '--allow-annotation-key=example.com/*',
    ]);
  });

  test.each([
    [
      { allowedMetadataKeys: { labels: ['argocd.argoproj.io/secret-type'] } },
      /KonnectorProps\.allowedMetadataKeys\.labels\[0\]: "argocd\.argoproj\.io\/secret-type" never crosses/,
    ],
    [
      { allowedMetadataKeys: { annotations: ['ok', 'meta.helm.sh/*'] } },
      /KonnectorProps\.allowedMetadataKeys\.annotations\[1\]: "meta\.helm\.sh\/\*" never crosses/,
    ],
    [
      { allowedMetadataKeys: { labels: ['klutch.anynines.com/bound'] } },
      /allowedMetadataKeys\.labels\[0\]: "klutch\.anynines\.com\/bound" is one of the konnector's own keys/,
    ],
    [{ allowedMetadataKeys: { labels: ['Bad Key'] } }, /allowedMetadataKeys\.labels\[0\]: "Bad Key" is not a label or annotation key pattern/],
    [{ allowedMetadataKeys: { labels: 'team' } }, /KonnectorProps\.allowedMetadataKeys\.labels: "team" must be a list/],
    [{ allowedMetadataKeys: ['team'] }, /KonnectorProps\.allowedMetadataKeys: \["team"\] must be/],
  ])('bad allowedMetadataKeys throw naming the prop, the value and why: %j', (props, msg) => {
    expect(() => new Konnector(chart(), 'K', props as any)).toThrow(msg);
  });

  test('konnectorManifests returns plain objects in apply order, same as the construct', () => {
    const m = konnectorManifests({ boundApis: bound });
    expect(m[0].kind).toBe('Namespace');
    const kinds = m.map((o) => o.kind);
    expect(kinds.indexOf('ServiceAccount')).toBeLessThan(kinds.indexOf('Deployment'));
    expect(kinds.indexOf('ClusterRole')).toBeLessThan(kinds.indexOf('ClusterRoleBinding'));
    expect(JSON.parse(JSON.stringify(m))).toEqual(m); // plain JSON, no class instances
    const c = chart();
    new Konnector(c, 'K', { boundApis: bound });
    const fromConstruct = synth(c)
      .map((o) => `${o.kind}/${o.metadata.name}`)
      .sort();
    expect(m.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(fromConstruct);
    expect(() => konnectorManifests({ replicas: -1 })).toThrow(/KonnectorProps\.replicas: -1/);
  });
});

describe('Konnector: the resource policy caps the RBAC', () => {
  const rolesOf = (props: object) => {
    const c = chart();
    new Konnector(c, 'K', props);
    const objs = synth(c);
    return { role: find(objs, 'ClusterRole'), args: find(objs, 'Deployment').spec.template.spec.containers[0].args as string[] };
  };

  test.each([
    [
      { boundApis: [{ group: 'apps', resources: ['daemonsets'] }] },
      /^KonnectorProps\.boundApis\[0\]\.resources\[0\]: "daemonsets\.apps" the export of daemonsets\.apps is outside the allow-list: workloads .*allow it with KonnectorProps\.allowedResources: \["daemonsets\.apps"\]$/,
    ],
    [
      { boundApis: [{ group: 'networking.k8s.io', resources: ['ingresses'] }] },
      /KonnectorProps\.boundApis\[0\]\.resources\[0\]: "ingresses\.networking\.k8s\.io" the export of ingresses\.networking\.k8s\.io is outside the allow-list/,
    ],
    [
      { claimedResources: [{ group: 'apps', resource: 'deployments' }] },
      /KonnectorProps\.claimedResources\[0\]: "deployments\.apps" the permission claim on deployments\.apps is outside the allow-list/,
    ],
    [
      { claimedResources: [{ group: 'rbac.authorization.k8s.io', resource: 'roles' }], allowedResources: [] },
      /KonnectorProps\.claimedResources\[0\]: "roles\.rbac\.authorization\.k8s\.io" the permission claim on roles\.rbac\.authorization\.k8s\.io is never allowed/,
    ],
    [
      { allowedResources: ['clusterrolebindings.rbac.authorization.k8s.io'] },
      /^KonnectorProps\.allowedResources\[0\]: "clusterrolebindings\.rbac\.authorization\.k8s\.io" can never be allowed: RBAC/,
    ],
    [{ allowedResources: ['Daemonsets'] }, /^KonnectorProps\.allowedResources\[0\]: "Daemonsets" is not <plural>\.<group>/],
    [{ allowedResources: 'daemonsets.apps' }, /^KonnectorProps\.allowedResources: "daemonsets\.apps" must be a list/],
    [
      { extraArgs: ['--allow-resource=daemonsets.apps'] },
      /KonnectorProps\.extraArgs\[0\]: "--allow-resource=daemonsets\.apps" sets the allow-list; use KonnectorProps\.allowedResources/,
    ],
  ])('outside the allow-list throws naming the prop, the resource and the prop that allows it: %j', (props, msg) => {
    expect(() => new Konnector(chart(), 'K', props as any)).toThrow(msg);
  });

  test('allowedResources: the konnector gets --allow-resource and exactly the allowed rules', () => {
    const none = rolesOf({ boundApis: bound });
    expect(none.args.filter((a) => a.startsWith('--allow-resource'))).toEqual([]);
    expect(none.role.rules.some((r: any) => r.apiGroups.includes('apps'))).toBe(false);
    const some = rolesOf({ boundApis: [...bound, { group: 'apps', resources: ['daemonsets'] }], allowedResources: ['daemonsets.apps'] });
    expect(some.args.filter((a) => a.startsWith('--allow-resource'))).toEqual(['--allow-resource=daemonsets.apps']);
    expect(rulesFor(some.role, 'apps', 'daemonsets')).toEqual([
      expect.objectContaining({ apiGroups: ['apps'], resources: ['daemonsets', 'daemonsets/status'] }),
    ]);
    expect(some.role.rules.filter((r: any) => r.apiGroups.includes('apps'))).toHaveLength(1);
  });
});

describe('Konnector write policy (ValidatingAdmissionPolicy on its ServiceAccount)', () => {
  test("bounds the konnector's Secret/ConfigMap writes: no system namespace, only allow-listed Secret types", () => {
    const c = chart();
    new Konnector(c, 'K', { boundApis: bound });
    const objs = synth(c);
    const policy = find(objs, 'ValidatingAdmissionPolicy');
    const binding = find(objs, 'ValidatingAdmissionPolicyBinding');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.metadata.name).toBe('klutch-konnector-klutch-bind-writes');
    expect(binding.spec).toEqual({ policyName: policy.metadata.name, validationActions: ['Deny'] });
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], resources: ['secrets', 'configmaps'], operations: ['CREATE', 'UPDATE', 'DELETE'] },
    ]);
    expect(policy.spec.matchConditions).toEqual([
      { name: 'konnector-service-account', expression: "request.userInfo.username == 'system:serviceaccount:klutch-bind:konnector'" },
    ]);
    const [ns, types] = policy.spec.validations;
    expect(ns.expression).toBe("!(request.namespace in ['kube-system', 'kube-public', 'kube-node-lease'])");
    expect(types.expression).toContain(
      "object.type in ['Opaque', 'connection.crossplane.io/v1alpha1', 'kubernetes.io/basic-auth', 'kubernetes.io/ssh-auth', 'kubernetes.io/tls']",
    );
    expect(types.expression).toContain("object.type.startsWith('servicebinding.io/')");
    expect(types.expression).not.toContain('service-account-token');
    expect(types.message).toContain('never kubernetes.io/service-account-token');
  });

  test('allowedSecretTypes: the konnector flag and the policy both get it; token types and bad values are refused', () => {
    const m = konnectorManifests({ boundApis: bound, namespace: 'kb2', allowedSecretTypes: ['kubernetes.io/dockerconfigjson'] });
    const policy = m.find((o) => o.kind === 'ValidatingAdmissionPolicy')!;
    expect(policy.spec.validations[1].expression).toContain("'kubernetes.io/tls', 'kubernetes.io/dockerconfigjson']");
    expect(policy.spec.matchConditions[0].expression).toContain("'system:serviceaccount:kb2:konnector'");
    const kinds = m.map((o) => o.kind);
    expect(kinds.indexOf('ValidatingAdmissionPolicy')).toBeLessThan(kinds.indexOf('ValidatingAdmissionPolicyBinding'));
    expect(kinds.indexOf('ValidatingAdmissionPolicyBinding')).toBeLessThan(kinds.indexOf('Deployment'));
    const dep = m.find((o) => o.kind === 'Deployment')!;
    expect(dep.spec.template.spec.containers[0].args).toContain('--allow-secret-type=kubernetes.io/dockerconfigjson');
    expect(() => konnectorManifests({ allowedSecretTypes: ['kubernetes.io/service-account-token'] })).toThrow(
      'KonnectorProps.allowedSecretTypes[0]: "kubernetes.io/service-account-token" is never copied',
    );
    expect(() => konnectorManifests({ allowedSecretTypes: ["x'y"] })).toThrow(`KonnectorProps.allowedSecretTypes[0]: "x'y" must be a Secret type`);
    expect(() => konnectorManifests({ extraArgs: ['--allow-secret-type=kubernetes.io/dockercfg'] })).toThrow(
      'KonnectorProps.extraArgs[0]: "--allow-secret-type=kubernetes.io/dockercfg" sets the Secret type allow-list; use KonnectorProps.allowedSecretTypes',
    );
  });
});

describe('Konnector: namespaces narrows the Secret rights to the bound namespaces', () => {
  test('no cluster-wide Secret or ConfigMap rule; a RoleBinding in each allowed namespace, a Role for its kubeconfig Secrets', () => {
    const c = chart();
    const k = new Konnector(c, 'K', { boundApis: bound, namespaces: KonnectorNamespaces.only('team-b', 'team-a') });
    const objs = synth(c);
    const clusterRoles = all(objs, 'ClusterRole');
    const main = clusterRoles.find((r: any) => r.metadata.name === 'klutch-konnector-klutch-bind')!;
    expect(main.rules.some((r: any) => r.apiGroups.includes('') && (r.resources.includes('secrets') || r.resources.includes('configmaps')))).toBe(false);
    const claims = clusterRoles.find((r: any) => r.metadata.name === 'klutch-konnector-klutch-bind-claims')!;
    expect(claims.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    ]);
    // bound by ClusterRoleBinding? never: only RoleBindings, one per allowed namespace
    expect(all(objs, 'ClusterRoleBinding').map((b: any) => b.roleRef.name)).toEqual(['klutch-konnector-klutch-bind']);
    const rbs = all(objs, 'RoleBinding').filter((b: any) => b.roleRef.name === 'klutch-konnector-klutch-bind-claims');
    expect(rbs.map((b: any) => b.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    for (const b of rbs) {
      expect(b.roleRef.kind).toBe('ClusterRole');
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: 'konnector', namespace: 'klutch-bind' }]);
    }
    const own = all(objs, 'Role').find((r: any) => r.metadata.name === 'konnector-kubeconfig-secrets')!;
    expect(own.metadata.namespace).toBe('klutch-bind');
    expect(own.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] }]);
    expect(all(objs, 'RoleBinding').some((b: any) => b.roleRef.name === 'konnector-kubeconfig-secrets' && b.metadata.namespace === 'klutch-bind')).toBe(true);
    for (const r of [...k.namespacedRules, ...k.ownNamespaceRules]) expect(r.why).toMatch(/\w/);
    const args = find(objs, 'Deployment').spec.template.spec.containers[0].args;
    expect(args).toEqual(expect.arrayContaining(['--allow-namespace=team-a', '--allow-namespace=team-b']));
  });

  test('by default: no cluster-wide Secret or ConfigMap rule at all, rights only in namespace default', () => {
    const c = chart();
    const k = new Konnector(c, 'K', { boundApis: bound });
    const objs = synth(c);
    for (const r of all(objs, 'ClusterRole')) {
      const bindsClusterWide = all(objs, 'ClusterRoleBinding').some((b: any) => b.roleRef.name === r.metadata.name);
      if (!bindsClusterWide) continue;
      expect(r.rules.filter((x: any) => x.apiGroups.includes('') && (x.resources.includes('secrets') || x.resources.includes('configmaps')))).toEqual([]);
    }
    expect(k.allowedNamespaces).toEqual(['default']);
    const rbs = all(objs, 'RoleBinding').filter((b: any) => b.roleRef.name === 'klutch-konnector-klutch-bind-claims');
    expect(rbs.map((b: any) => b.metadata.namespace)).toEqual(['default']);
    const args = find(objs, 'Deployment').spec.template.spec.containers[0].args;
    expect(args.filter((a: string) => a.startsWith('--allow-namespace') || a.startsWith('--all-namespaces'))).toEqual(['--allow-namespace=default']);
  });

  test('addNamespace replaces the default namespace, then adds; with all() it changes nothing', () => {
    const c = chart();
    const k = new Konnector(c, 'K', { boundApis: bound });
    k.addNamespace('shop');
    k.addNamespace('team-a');
    k.addNamespace('shop');
    const objs = synth(c);
    expect(k.allowedNamespaces).toEqual(['shop', 'team-a']);
    const rbs = all(objs, 'RoleBinding').filter((b: any) => b.roleRef.name === 'klutch-konnector-klutch-bind-claims');
    expect(rbs.map((b: any) => b.metadata.namespace).sort()).toEqual(['shop', 'team-a']);
    const args = find(objs, 'Deployment').spec.template.spec.containers[0].args;
    expect(args.filter((a: string) => a.startsWith('--allow-namespace'))).toEqual(['--allow-namespace=shop', '--allow-namespace=team-a']);
    // an explicit list is added to, never replaced
    const e = new Konnector(chart(), 'K', { namespaces: KonnectorNamespaces.only('default') });
    e.addNamespace('shop');
    expect(e.allowedNamespaces).toEqual(['default', 'shop']);
    const wide = new Konnector(chart(), 'K', { namespaces: KonnectorNamespaces.all() });
    wide.addNamespace('shop');
    expect(wide.allowedNamespaces).toBeUndefined();
    expect(wide.rules.some((r) => r.resources.includes('secrets'))).toBe(true);
    expect(() => k.addNamespace('kube-system')).toThrow('Konnector.addNamespace(namespace): "kube-system" is a system namespace');
    expect(() => k.addNamespace('klutch-bind')).toThrow('Konnector.addNamespace(namespace): "klutch-bind" is the konnector\'s own namespace');
  });

  test('KonnectorNamespaces.all() is the explicit cluster-wide choice: rules cluster-wide, --all-namespaces, no RoleBinding', () => {
    const c = chart();
    const k = new Konnector(c, 'K', { boundApis: bound, namespaces: KonnectorNamespaces.all() });
    const objs = synth(c);
    expect(k.rules.some((r) => r.resources.includes('secrets'))).toBe(true);
    expect(k.namespacedRules).toEqual([]);
    expect(all(objs, 'RoleBinding').some((b: any) => b.roleRef.name.endsWith('-claims'))).toBe(false);
    const args = find(objs, 'Deployment').spec.template.spec.containers[0].args;
    expect(args.filter((a: string) => a.startsWith('--allow-namespace') || a.startsWith('--all-namespaces'))).toEqual(['--all-namespaces']);
    expect(String(KonnectorNamespaces.all())).toBe('KonnectorNamespaces.all()');
    expect(String(KonnectorNamespaces.only('b', 'a', 'b'))).toBe("KonnectorNamespaces.only('a', 'b')");
  });

  test('the deprecated allowedNamespaces is the same list', () => {
    const k = new Konnector(chart(), 'K', { allowedNamespaces: ['team-b', 'team-a'] });
    expect(k.allowedNamespaces).toEqual(['team-a', 'team-b']);
    expect(() => new Konnector(chart(), 'K', { allowedNamespaces: ['team-a'], namespaces: KonnectorNamespaces.only('team-a') })).toThrow(
      'KonnectorProps.allowedNamespaces: ["team-a"] is the deprecated form of KonnectorProps.namespaces; give only namespaces',
    );
  });

  test.each([
    [() => KonnectorNamespaces.only(), 'KonnectorNamespaces.only(namespaces): [] must name at least one namespace; use KonnectorNamespaces.all()'],
    [() => KonnectorNamespaces.only('team-a', 'kube-system'), 'KonnectorNamespaces.only(namespaces[1]): "kube-system" is a system namespace'],
    [
      () => new Konnector(chart(), 'K', { namespaces: KonnectorNamespaces.only('klutch-bind') }),
      'KonnectorProps.namespaces[0]: "klutch-bind" is the konnector\'s own namespace',
    ],
    [() => new Konnector(chart(), 'K', { namespaces: ['team-a'] as never }), 'KonnectorProps.namespaces: ["team-a"] must be KonnectorNamespaces.only('],
  ])('refuses a bad namespaces value naming it (%#)', (f, msg) => {
    expect(f).toThrow(msg);
  });

  test.each([
    [['kube-system'], 'KonnectorProps.allowedNamespaces[0]: "kube-system" is a system namespace'],
    [['Team_A'], 'KonnectorProps.allowedNamespaces[0]: "Team_A" is not a namespace name'],
    [['klutch-bind'], 'KonnectorProps.allowedNamespaces[0]: "klutch-bind" is the konnector\'s own namespace'],
    [[], 'KonnectorProps.allowedNamespaces: [] must list at least one namespace'],
  ])('refuses allowedNamespaces %j naming the field and the value', (v, msg) => {
    expect(() => new Konnector(chart(), 'K', { allowedNamespaces: v })).toThrow(msg);
  });

  test('refuses --allow-namespace and --all-namespaces in extraArgs (they would not set the RBAC)', () => {
    expect(() => new Konnector(chart(), 'K', { extraArgs: ['--allow-namespace=team-a'] })).toThrow('use KonnectorProps.namespaces');
    expect(() => new Konnector(chart(), 'K', { extraArgs: ['--all-namespaces'] })).toThrow(
      'KonnectorProps.extraArgs[0]: "--all-namespaces" sets the namespace allow-list',
    );
  });
});
