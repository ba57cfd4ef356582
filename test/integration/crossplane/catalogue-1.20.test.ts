// @realinfra late (Crossplane 1.20: built in the background on a new machine; scripts/_lanes.ts)
/**
 * The catalogue on real Crossplane 1.20 (what Klutch runs), where its behaviour differs from 2.x: the
 * package manager of 1.20 installs the same Configuration package; the claim and XR CRDs 1.20 derives
 * (its own property sets) equal deriveClaimCrd / deriveXrCrd for 1.20; a claim without compositionRef
 * is admitted and composed by the default backend; Ready follows the a8s operator status (played by
 * the a8s operator stand-in of _support.ts, at operator level only); deletion cascades.
 * The package's dependsOn (function-patch-and-transform, provider-kubernetes) is resolved by the
 * package manager here (a8s-only catalogue). The field-by-field composition of every service is asserted on 2.3 (catalogue.test.ts): the same
 * Compositions, run by the same function-patch-and-transform.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PATCH_AND_TRANSFORM_PACKAGE, PROVIDER_KUBERNETES_PACKAGE } from '../../../constructs/crossplane/index.js';
import { deriveClaimCrd, deriveXrCrd } from '../../../constructs/validate/index.js';
import { type CatalogueCluster, claimOf, composed, condition, crdSpec, GROUP, NS, startCatalogueCluster, waitFor } from './_support.js';

let env: CatalogueCluster;

beforeAll(async () => {
  // PostgreSQL on a8s with its operations: the package's dependsOn (function-patch-and-transform,
  // provider-kubernetes) is resolved by the package manager against what the harness installed.
  env = await startCatalogueCluster('xp-catalogue-v1', '1.20', { catalogue: { services: ['postgresql'], automations: ['a8s'] }, resolveDependencies: true });
}, 900_000);

afterAll(async () => {
  if (env) process.stdout.write(`crossplane 1.20 catalogue test timings (ms): ${JSON.stringify(env.timings)}\n`);
  await env?.cluster.stop();
}, 120_000);

describe('Crossplane 1.20', () => {
  it('installs the Configuration package; the CRDs it derives equal deriveClaimCrd / deriveXrCrd (1.20)', async () => {
    const conf = await env.api.get('pkg.crossplane.io/v1', 'Configuration', 'klutch-catalogue');
    expect(condition(conf, 'Installed')?.status).toBe('True');
    expect(condition(conf, 'Healthy')?.status).toBe('True');
    // The package manager resolved its dependsOn against the installed function and provider.
    const lock = await env.api.get('pkg.crossplane.io/v1beta1', 'Lock', 'lock');
    const entry = (
      lock as unknown as { packages: Array<{ kind?: string; type?: string; source: string; dependencies?: Array<{ package: string; constraints: string }> }> }
    ).packages.find((p) => (p.kind ?? p.type) === 'Configuration' && p.source.endsWith('/klutch/catalogue'));
    if (!entry) throw new Error(`no Configuration klutch/catalogue in the Lock: ${JSON.stringify(lock)}`);
    expect(condition(lock, 'Resolved')).toMatchObject({ status: 'True', reason: 'DependencyResolutionSucceeded' });
    expect(entry.dependencies!.map((d) => `${d.package} ${d.constraints}`).sort()).toEqual([
      `${PATCH_AND_TRANSFORM_PACKAGE.replace(/:(v[^:]+)$/, ' >=$1')}`,
      `${PROVIDER_KUBERNETES_PACKAGE.replace(/:(v[^:]+)$/, ' >=$1')}`,
    ]);
    for (const x of env.xrds) {
      const derivedXr = deriveXrCrd(x as never, { crossplane: '1.20' });
      const derivedClaim = deriveClaimCrd(x as never, { crossplane: '1.20' });
      const liveXr = await env.api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', derivedXr.metadata.name!);
      const liveClaim = await env.api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', derivedClaim.metadata.name!);
      expect({ name: derivedXr.metadata.name, spec: crdSpec(liveXr!) }).toEqual({ name: derivedXr.metadata.name, spec: crdSpec(derivedXr) });
      expect({ name: derivedClaim.metadata.name, spec: crdSpec(liveClaim!) }).toEqual({ name: derivedClaim.metadata.name, spec: crdSpec(derivedClaim) });
    }
  });

  it('a PostgresqlInstance without compositionRef is admitted, composed by a8s, Ready once the operator reports Running, and deleted with everything it composed', async () => {
    const { api, a8s } = env;
    const name = 'legacy-db';
    await api.create(claimOf('PostgresqlInstance', name, { service: 'a9s-postgresql13', plan: 'postgresql-single-nano' }));
    const {
      xr,
      resources: [obj],
    } = await composed(api, 'PostgresqlInstance', name);
    expect(xr.spec!.compositionRef).toEqual({ name: 'a8s-postgresql' });
    const pg = await waitFor('the a8s Postgresql', async () => api.get('postgresql.anynines.com/v1beta3', 'Postgresql', name, NS));
    const plan = env.catalogue.service('postgresql').model.plans.get('postgresql-single-nano')!;
    expect(pg.spec).toMatchObject({ version: 13, replicas: plan.replicas, volumeSize: plan.size.storage });
    const isReady = async () => condition(await api.get(GROUP, 'PostgresqlInstance', name, NS), 'Ready')?.status === 'True';
    await a8s.postgresqlNotRunning(name, NS);
    await waitFor(
      'NotRunning observed on the claim',
      async () => ((await api.get(GROUP, 'PostgresqlInstance', name, NS))?.status?.managed?.clusterStatus === 'NotRunning' ? true : undefined),
      120_000,
    );
    expect(await isReady()).toBe(false);
    await a8s.postgresqlRunning(name, NS);
    await waitFor('claim Ready=True', async () => ((await isReady()) ? true : undefined), 120_000);
    await api.delete(GROUP, 'PostgresqlInstance', name, NS);
    await waitFor(
      'claim, XR, Object and Postgresql gone',
      async () =>
        !(await api.get(GROUP, 'PostgresqlInstance', name, NS)) &&
        !(await api.get(xr.apiVersion!, xr.kind!, xr.metadata!.name!)) &&
        !(await api.get(obj.apiVersion!, obj.kind!, obj.metadata!.name!)) &&
        !(await api.get('postgresql.anynines.com/v1beta3', 'Postgresql', name, NS))
          ? true
          : undefined,
      120_000,
    );
  }, 300_000);
});
