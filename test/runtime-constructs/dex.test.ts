import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { Dex, DexProps } from '../../constructs/runtime/index.js';
import { all, chart, expectHardened, expectNoWildcards, find, synth } from './_helpers.js';

const base: DexProps = {
  issuer: 'https://bind.example.com/dex',
  staticClients: [
    { id: 'klutch-backend', name: 'Klutch', redirectUris: ['https://bind.example.com/callback'], secret: { name: 'oidc', key: 'client-secret' } },
  ],
  connectors: [
    {
      type: 'github',
      id: 'github',
      name: 'GitHub',
      config: {
        clientID: '$GITHUB_CLIENT_ID',
        clientSecret: '$GITHUB_CLIENT_SECRET',
        redirectURI: 'https://bind.example.com/dex/callback',
        orgs: [{ name: 'example' }],
      },
      secretEnv: { GITHUB_CLIENT_ID: { name: 'github', key: 'id' }, GITHUB_CLIENT_SECRET: { name: 'github', key: 'secret' } },
    },
  ],
};

function dex(props: Partial<DexProps> = {}) {
  const c = chart();
  const d = new Dex(c, 'D', { ...base, ...props });
  return { d, objs: synth(c) };
}

describe('Dex', () => {
  test('config with static clients and connectors, secrets via env', () => {
    const { objs } = dex();
    const cm = find(objs, 'ConfigMap', 'dex-config');
    const cfg = parse(cm.data['config.yaml']);
    expect(cfg.issuer).toBe('https://bind.example.com/dex');
    expect(cfg.storage).toEqual({ type: 'memory' });
    expect(cfg.staticClients).toEqual([
      { id: 'klutch-backend', name: 'Klutch', redirectURIs: ['https://bind.example.com/callback'], secretEnv: 'DEX_CLIENT_SECRET_0' },
    ]);
    expect(cfg.connectors[0]).toMatchObject({ type: 'github', id: 'github', config: { clientSecret: '$GITHUB_CLIENT_SECRET' } });
    expect(cm.data['config.yaml']).not.toMatch(/client-secret|secret: /);
    const dep = find(objs, 'Deployment', 'dex');
    const ctr = dep.spec.template.spec.containers[0];
    const env = Object.fromEntries(ctr.env.map((e: any) => [e.name, e.valueFrom.secretKeyRef]));
    expect(env).toEqual({
      DEX_CLIENT_SECRET_0: { name: 'oidc', key: 'client-secret' },
      GITHUB_CLIENT_ID: { name: 'github', key: 'id' },
      GITHUB_CLIENT_SECRET: { name: 'github', key: 'secret' },
    });
    expect(ctr.command).toEqual(['/usr/local/bin/dex', 'serve', '/etc/dex/config.yaml']);
    expect(dep.spec.template.spec.volumes.find((v: any) => v.name === 'config').configMap.name).toBe('dex-config');
    expect(dep.spec.template.spec.automountServiceAccountToken).toBe(false);
    expectHardened(dep);
    expect(all(objs, 'ClusterRole')).toHaveLength(0);
    expect(find(objs, 'Service', 'dex').spec.ports.map((p: any) => p.port)).toEqual([5556, 5558]);
  });

  test('kubernetes storage adds RBAC limited to the dex.coreos.com group and allows HA', () => {
    const { objs } = dex({ storage: 'kubernetes', replicas: 2 });
    expectNoWildcards(objs);
    const role = find(objs, 'ClusterRole');
    expect(new Set(role.rules.flatMap((r: any) => r.apiGroups))).toEqual(new Set(['dex.coreos.com', 'apiextensions.k8s.io']));
    expect(find(objs, 'Deployment').spec.replicas).toBe(2);
    expect(find(objs, 'ClusterRoleBinding').subjects[0]).toMatchObject({ name: 'dex', namespace: 'klutch-system' });
  });

  test('the ServiceAccount (cdk8s-plus) mounts its token only for kubernetes storage, and lists no secrets', () => {
    const sa = (props: Partial<DexProps>) => find(dex(props).objs, 'ServiceAccount', 'dex');
    expect(sa({})).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: expect.objectContaining({ name: 'dex', namespace: 'klutch-system' }),
      automountServiceAccountToken: false,
    });
    expect(sa({ storage: 'kubernetes' }).automountServiceAccountToken).toBe(true);
  });

  test('serveTls(): Dex serves its web port with the Secret’s certificate; probes stay on the plain telemetry port', () => {
    const c = chart();
    const d = new Dex(c, 'D', base).serveTls('dex-tls');
    const objs = synth(c);
    const cfg = parse(find(objs, 'ConfigMap', 'dex-config').data['config.yaml']);
    expect(cfg.web).toEqual({ https: '0.0.0.0:5556', tlsCert: '/etc/dex/tls/tls.crt', tlsKey: '/etc/dex/tls/tls.key' });
    expect(cfg.telemetry).toEqual({ http: '0.0.0.0:5558' });
    expect(cfg.staticClients[0].id).toBe('klutch-backend');
    const pod = find(objs, 'Deployment', 'dex').spec.template.spec;
    expect(pod.volumes.find((v: any) => v.name === 'tls')).toEqual({ name: 'tls', secret: { secretName: 'dex-tls' } });
    expect(pod.containers[0].volumeMounts.find((m: any) => m.name === 'tls')).toEqual({ name: 'tls', mountPath: '/etc/dex/tls', readOnly: true });
    expect(pod.containers[0].readinessProbe.httpGet.port).toBe('telemetry');
    expect(d.serviceUrl).toBe('https://dex.klutch-system.svc:5556/dex');
    expect(() => d.serveTls('other')).toThrow(/Dex\.serveTls\(secretName\): "other" is a second call; TLS is already served from Secret "dex-tls"/);
    expect(() => new Dex(chart(), 'E', base).serveTls('Not_A_Name')).toThrow(/Dex\.serveTls\(secretName\).*Not_A_Name/);
    expect(new Dex(chart(), 'F', base).serviceUrl).toBe('http://dex.klutch-system.svc:5556/dex');
  });

  test.each([
    [{ issuer: 'http://insecure/dex' }, /DexProps\.issuer: "http:\/\/insecure\/dex" must be an https URL/],
    [{ staticClients: [] }, /DexProps\.staticClients: \[\]/],
    [{ connectors: [] }, /DexProps\.connectors: \[\]/],
    [{ replicas: 2 }, /DexProps\.replicas: 2 replicas need storage "kubernetes"/],
    [
      { connectors: [{ ...base.connectors[0], config: { clientSecret: 'hunter2' } }] },
      /DexProps\.connectors\[0\]\.config\.clientSecret: a literal secret value is not allowed/,
    ],
    [{ connectors: [{ ...base.connectors[0], config: { clientSecret: '$UNDECLARED' } }] }, /refers to \$UNDECLARED, which is not declared/],
    [{ staticClients: [base.staticClients[0], base.staticClients[0]] }, /DexProps\.staticClients\[1\]\.id: "klutch-backend" is used by two/],
    [{ staticClients: [{ ...base.staticClients[0], redirectUris: ['nope'] }] }, /DexProps\.staticClients\[0\]\.redirectUris\[0\]: "nope"/],
    [{ storage: 'sqlite3' as any }, /DexProps\.storage: "sqlite3"/],
  ])('bad props throw naming the prop and value (%#)', (props, msg) => {
    expect(() => dex(props as Partial<DexProps>)).toThrow(msg);
  });
});
