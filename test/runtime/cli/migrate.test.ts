/**
 * `klutch-kit migrate` (runtime/cli/migrate.ts, migrate-claims.ts) without a cluster: which composed resources
 * can be orphaned, how a saved claim becomes a namespaced XR, and the usage errors (exit code 2) before any
 * cluster is contacted. The steps against real Crossplane are test/integration/crossplane/migration.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExitCode } from '../../../runtime/cli/errors.js';
import { main } from '../../../runtime/cli/main.js';
import { createXrs, orphanProblem, xrOfClaim } from '../../../runtime/cli/migrate-claims.js';
import type { KubeClient } from '../../../runtime/core/client.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-migrate-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: readonly string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const before = process.exitCode;
  await main(['node', 'klutch-kit', ...args], { write: (s: string) => (err += s) });
  const code = Number(process.exitCode ?? 0);
  process.exitCode = before;
  return { code, err };
}

const object = (spec: Record<string, unknown>) => ({
  apiVersion: 'kubernetes.crossplane.io/v1alpha2',
  kind: 'Object',
  metadata: { name: 'orders-x' },
  spec: { forProvider: { manifest: {} }, ...spec },
});

describe('orphanProblem', () => {
  it('accepts a managed resource with the default management policies', () => {
    expect(orphanProblem(object({ deletionPolicy: 'Delete' }))).toBeUndefined();
    expect(orphanProblem(object({ deletionPolicy: 'Delete', managementPolicies: ['*'] }))).toBeUndefined();
    expect(orphanProblem(object({ deletionPolicy: 'Delete', managementPolicies: ['Observe', 'Create', 'Update'] }))).toBeUndefined();
    expect(orphanProblem(object({ deletionPolicy: 'Orphan', managementPolicy: 'Default' }))).toBeUndefined();
  });

  it('refuses what Orphan would not keep, naming the field and value', () => {
    expect(orphanProblem(object({ deletionPolicy: 'Delete', managementPolicies: ['Observe', 'Delete'] }))).toMatch(
      /spec\.managementPolicies \["Observe","Delete"\].*remove "Delete"/,
    );
    expect(orphanProblem(object({ deletionPolicy: 'Delete', managementPolicy: 'ObserveDelete' }))).toMatch(/spec\.managementPolicy "ObserveDelete"/);
    expect(orphanProblem({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).toMatch(
      /has no spec\.deletionPolicy: it is not a managed resource/,
    );
  });
});

describe('xrOfClaim', () => {
  it('keeps apiVersion, kind, name, namespace and spec; moves compositionRef under spec.crossplane; drops claim machinery', () => {
    const claim = {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'orders', namespace: 'shop', uid: 'u', resourceVersion: '7', labels: { a: 'b' }, finalizers: ['f'] },
      spec: {
        service: 'a9s-postgresql14',
        plan: 'postgresql-single-nano',
        compositionRef: { name: 'a8s-postgresql' },
        resourceRef: { apiVersion: 'anynines.com/v1', kind: 'XPostgresqlInstance', name: 'orders-abc' },
        writeConnectionSecretToRef: { name: 'x' },
        compositeDeletePolicy: 'Foreground',
        compositionUpdatePolicy: 'Automatic',
        compositionRevisionRef: { name: 'a8s-postgresql-1' },
      },
      status: { conditions: [] },
    };
    expect(xrOfClaim(claim)).toEqual({
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'orders', namespace: 'shop' },
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', crossplane: { compositionRef: { name: 'a8s-postgresql' } } },
    });
    expect(xrOfClaim({ ...claim, spec: { service: 's' } }).spec).toEqual({ service: 's' });
  });
});

describe('createXrs', () => {
  it('refuses a saved file whose items are not claims, before contacting the cluster', async () => {
    const client = new Proxy({} as KubeClient, {
      get: () => {
        throw new Error('the cluster must not be contacted');
      },
    });
    await expect(createXrs({ client, log: () => undefined }, [{ kind: 'PostgresqlInstance', metadata: { name: 'o' } }])).rejects.toThrow(
      /item 0: apiVersion is undefined; expected a claim as `klutch-kit migrate release-claims --save` wrote it/,
    );
  });
});

describe('klutch-kit migrate: usage errors (exit code 2)', () => {
  it('release-claims refuses to overwrite a saved file', async () => {
    const f = join(dir, 'claims.yaml');
    writeFileSync(f, 'items: []\n');
    const r = await cli(['migrate', 'release-claims', '--save', f]);
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.err).toContain(`--save: ${f} exists; it may hold the claims an earlier run saved: give a new path`);
  });

  it('release-claims refuses a save file in a missing folder and a bad --timeout', async () => {
    expect((await cli(['migrate', 'release-claims', '--save', join(dir, 'nope', 'c.yaml')])).err).toContain('does not exist');
    const r = await cli(['migrate', 'release-claims', '--save', join(dir, 'c2.yaml'), '--timeout', '5']);
    expect(r).toEqual({ code: ExitCode.USAGE, err: 'klutch-kit: --timeout: "5" is not a duration; give seconds or minutes, e.g. 300s or 10m\n' });
  });

  it('create-xrs refuses an unreadable or empty file', async () => {
    const missing = await cli(['migrate', 'create-xrs', '--from', join(dir, 'missing.yaml')]);
    expect(missing.code).toBe(ExitCode.USAGE);
    expect(missing.err).toMatch(/--from: cannot read .*missing\.yaml.*give the file `klutch-kit migrate release-claims --save` wrote/);
    const empty = join(dir, 'empty.yaml');
    writeFileSync(empty, 'apiVersion: v1\nkind: List\nitems: []\n');
    expect(await cli(['migrate', 'create-xrs', '--from', empty])).toEqual({ code: ExitCode.USAGE, err: `klutch-kit: --from: ${empty} holds no claims\n` });
  });

  it('a missing --kubeconfig is named', async () => {
    const f = join(dir, 'one.yaml');
    writeFileSync(f, 'apiVersion: v1\nkind: List\nitems: [{apiVersion: anynines.com/v1, kind: PostgresqlInstance, metadata: {name: o, namespace: s}}]\n');
    const r = await cli(['migrate', 'create-xrs', '--from', f, '--kubeconfig', join(dir, 'no-kubeconfig')]);
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.err).toContain("no-kubeconfig does not exist; give the control plane's kubeconfig");
  });
});
