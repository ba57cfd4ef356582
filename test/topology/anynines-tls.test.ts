/** ControlPlaneCluster `anynines.tls`: the CA (or server name) of the a9s endpoints, written into every https a9s ProviderConfig's `spec.tls`. */
import { App } from 'cdk8s';
import { ControlPlaneCluster, renderTopology } from '../../constructs/topology/index.js';
import type { AnyninesEndpoints } from '../../constructs/topology/index.js';

type Obj = { apiVersion?: string; kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> };
const CA = { namespace: 'crossplane-system', name: 'a9s-ca', key: 'ca.crt' };

function a9sProviderConfigs(anynines: AnyninesEndpoints): Map<string, Obj> {
  const app = new App({ outdir: '/nonexistent' });
  new ControlPlaneCluster(app, 'CP', {
    host: 'bind.example.com',
    dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] },
    anynines,
  });
  const [cluster] = renderTopology(app);
  const pcs = cluster!.files.map((f) => f.object as Obj).filter((o) => o.kind === 'ProviderConfig' && o.apiVersion === 'dataservices.anynines.com/v1');
  return new Map(pcs.map((p) => [p.metadata!.name!, p]));
}

describe('ControlPlaneCluster anynines.tls', () => {
  it('puts the CA into every a9s ProviderConfig with an https URL, and none into plain-http ones', () => {
    const pcs = a9sProviderConfigs({
      baseDomain: 'a9s.example.com',
      urls: { 'keyvalue-service-broker': 'http://10.0.0.1:8080' },
      tls: { caBundleSecretRef: CA },
    });
    expect(pcs.size).toBe(16);
    expect(pcs.get('postgresql-service-broker')!.spec).toMatchObject({
      url: 'https://postgresql-service-broker.a9s.example.com',
      tls: { caBundleSecretRef: CA },
    });
    expect(pcs.get('postgresql-backup-manager')!.spec).toMatchObject({ tls: { caBundleSecretRef: CA } });
    expect(pcs.get('keyvalue-service-broker')!.spec!['tls']).toBeUndefined();
    expect(pcs.get('keyvalue-backup-manager')!.spec).toMatchObject({ tls: { caBundleSecretRef: CA } });
  });

  it('emits no tls without the prop', () => {
    const pcs = a9sProviderConfigs({ baseDomain: 'a9s.example.com' });
    expect([...pcs.values()].filter((p) => p.spec!['tls'] !== undefined)).toEqual([]);
  });

  it('rejects contradicting TLS settings, naming the field', () => {
    expect(() => a9sProviderConfigs({ baseDomain: 'a9s.example.com', tls: { caBundleSecretRef: CA, insecureSkipVerify: true } })).toThrow(
      /tls\.insecureSkipVerify.*contradicts tls\.caBundleSecretRef/,
    );
    expect(() =>
      a9sProviderConfigs({ baseDomain: 'a9s.example.com', tls: { caBundleSecretRef: { namespace: 'crossplane-system', name: '', key: 'ca.crt' } } }),
    ).toThrow(/caBundleSecretRef/);
  });
});
