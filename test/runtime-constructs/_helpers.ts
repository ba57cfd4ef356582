import { Chart, Testing } from 'cdk8s';

export type Obj = Record<string, any>;

export function chart(): Chart {
  return new Chart(Testing.app(), 'test');
}

export function synth(c: Chart): Obj[] {
  return Testing.synth(c) as Obj[];
}

export function find(objs: Obj[], kind: string, name?: string): Obj {
  const o = objs.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind}${name ? `/${name}` : ''} in ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
}

export function all(objs: Obj[], kind: string): Obj[] {
  return objs.filter((x) => x.kind === kind);
}

/** Every container and the pod security context of a Deployment. */
export function expectHardened(dep: Obj): void {
  const pod = dep.spec.template.spec;
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  for (const c of pod.containers) {
    expect(c.securityContext).toEqual(
      expect.objectContaining({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        privileged: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      }),
    );
    expect(c.resources.requests.cpu).toBeDefined();
    expect(c.resources.requests.memory).toBeDefined();
    expect(c.resources.limits.cpu).toBeDefined();
    expect(c.resources.limits.memory).toBeDefined();
    expect(c.image).not.toMatch(/:latest$/);
  }
}

/** No rule anywhere grants a wildcard verb/resource, and nothing binds cluster-admin. */
export function expectNoWildcards(objs: Obj[]): void {
  for (const o of objs) {
    if (o.kind === 'ClusterRole' || o.kind === 'Role') {
      for (const r of o.rules ?? []) {
        expect(r.verbs).not.toContain('*');
        expect(r.resources).not.toContain('*');
        expect(r.apiGroups).not.toContain('*');
      }
    }
    if (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') {
      expect(o.roleRef.name).not.toBe('cluster-admin');
      expect(o.roleRef.name).not.toBe('admin');
    }
  }
}

/** Rules of a role that mention a resource. */
export function rulesFor(role: Obj, group: string, resource: string): Obj[] {
  return (role.rules ?? []).filter((r: Obj) => r.apiGroups.includes(group) && r.resources.includes(resource));
}
