import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Command } from 'commander';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { apiServiceExportKind, bindingCrds, clusterBindingKind } from '../../contract/api/index.js';
import { formatIssue, validateDirectory } from '../../constructs/validate/index.js';
import { registerValidateCommand, runValidate } from '../../runtime/cli/validate.js';

const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'klutch');
const yaml = (...docs: unknown[]) => docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');

let good: string;
let bad: string;

const claim = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: { name, namespace: 'app' },
  spec,
});
const a9s = { service: 'a9s-postgresql13', plan: 'postgresql-single-small', compositionRef: { name: 'a9s-postgresql' } };

beforeAll(() => {
  // A valid control-plane folder: XRD + Compositions + claims + binding API objects + core kinds.
  good = mkdtempSync(join(tmpdir(), 'kk-validate-good-'));
  mkdirSync(join(good, 'crossplane'));
  for (const f of ['xp-common-postgresql_definition.yaml', 'xp-a9s-postgresql-composition.yaml', 'xp-a8s-postgresql-composition.yaml'])
    copyFileSync(join(fixtures, f), join(good, 'crossplane', f));
  writeFileSync(join(good, 'claims.yaml'), yaml(claim('db1', a9s), claim('db2', { ...a9s, plan: 'postgresql-replica-big' })));
  writeFileSync(
    join(good, 'binding.yaml'),
    yaml(
      apiServiceExportKind.make(
        'postgresqlinstances.anynines.com',
        {
          group: 'anynines.com',
          names: { kind: 'PostgresqlInstance', plural: 'postgresqlinstances' },
          scope: 'Namespaced',
          informerScope: 'Namespaced',
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
        },
        { namespace: 'cluster-abc' },
      ),
      clusterBindingKind.make(
        'cluster',
        { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'anynines' },
        { namespace: 'cluster-abc' },
      ),
    ),
  );
  writeFileSync(join(good, 'crds.yaml'), yaml(...bindingCrds()));
  writeFileSync(
    join(good, 'core.yaml'),
    yaml(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'konnector', namespace: 'klutch-bind' }, spec: {} },
    ),
  );
  writeFileSync(
    join(good, 'provider.yaml'),
    yaml({
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Provider',
      metadata: { name: 'provider-kubernetes' },
      spec: { package: 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1' },
    }),
  );

  // An invalid folder: one error of each sort.
  bad = mkdtempSync(join(tmpdir(), 'kk-validate-bad-'));
  copyFileSync(join(fixtures, 'xp-common-postgresql_definition.yaml'), join(bad, 'xrd.yaml'));
  const comp = parse(readFileSync(join(fixtures, 'xp-a9s-postgresql-composition.yaml'), 'utf8'));
  comp.metadata.name = 'broken';
  comp.spec.pipeline[0].input.resources[0].patches[0].type = 'FromSomewhere';
  comp.spec.pipeline[0].input.resources[0].colour = 'blue';
  comp.spec.pipeline[0].input.resources[0].base.spec.forProvider.acceptsIncomplete = 'yes';
  writeFileSync(join(bad, 'composition.yaml'), yaml(comp));
  writeFileSync(join(bad, 'claims.yaml'), yaml(claim('ok', a9s), claim('wrong-service', { ...a9s, service: 'a9s-postgresql99' })));
  writeFileSync(
    join(bad, 'binding.yaml'),
    yaml(
      clusterBindingKind.make(
        'my-cluster',
        { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'anynines' },
        { namespace: 'cluster-abc' },
      ),
      {
        apiVersion: 'kubernetes.crossplane.io/v1alpha2',
        kind: 'Object',
        metadata: { name: 'wrapped' },
        spec: { forProvider: { manifest: { ...clusterBindingKind.make('cluster', { providerPrettyName: '' } as never, { namespace: 'x' }) } } },
      },
    ),
  );
  writeFileSync(join(bad, 'core.yaml'), yaml({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'x' }, spec: {} }));
  writeFileSync(
    join(bad, 'gadget.yaml'),
    yaml({ apiVersion: 'example.org/v1alpha1', kind: 'Gadget', metadata: { name: 'cp', namespace: 'argocd' }, spec: {} }),
  );
  writeFileSync(
    join(bad, 'pkg.yaml'),
    yaml({ apiVersion: 'pkg.crossplane.io/v1', kind: 'Provider', metadata: { name: 'p' }, spec: { revisionHistoryLimit: 'many' } }),
  );
  writeFileSync(
    join(bad, 'legacy.yaml'),
    yaml({
      apiVersion: 'apiextensions.crossplane.io/v1',
      kind: 'Composition',
      metadata: { name: 'legacy' },
      spec: { compositeTypeRef: { apiVersion: 'anynines.com/v1', kind: 'XPostgresqlInstance' }, mode: 'Resources', resources: [] },
    }),
  );
  writeFileSync(join(bad, 'broken.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n');
});

afterAll(() => {
  rmSync(good, { recursive: true, force: true });
  rmSync(bad, { recursive: true, force: true });
});

describe('validateDirectory', () => {
  it('accepts a valid folder and counts what it checked', () => {
    const r = validateDirectory(good);
    expect(r.issues.map(formatIssue)).toEqual([]);
    expect(r).toMatchObject({ ok: true, files: 8, objects: 17, schemaChecked: 8, shapeOnly: 9, unknownKinds: [] });
  });

  it('reports every error as file: kind/namespace/name: field.path: message', () => {
    const r = validateDirectory(bad, { strict: false });
    const lines = r.issues.map(formatIssue);
    expect(lines).toEqual(
      expect.arrayContaining([
        'claims.yaml: PostgresqlInstance/app/wrong-service: spec: Unsupported service used for postgresql',
        'binding.yaml: ClusterBinding/cluster-abc/my-cluster: (object): cluster binding name should be cluster',
        'binding.yaml: Object/wrapped: spec.forProvider.manifest.spec.kubeconfigSecretRef: Required value',
        'binding.yaml: Object/wrapped: spec.forProvider.manifest.spec.providerPrettyName: Invalid value: "": must NOT have fewer than 1 characters',
        'core.yaml: document 1 (Service): metadata.name: Required value: name or generateName is required, got undefined',
        'pkg.yaml: Provider/p: spec.package: Required value',
        'pkg.yaml: Provider/p: spec.revisionHistoryLimit: Invalid value: "many": must be of type integer',
        'legacy.yaml: Composition/legacy: spec.mode: Unsupported value: "Resources": supported values: "Pipeline" (Crossplane 2 only)',
        'legacy.yaml: Composition/legacy: spec.resources: unknown field "resources" (not declared in the schema) (Crossplane 2 only)',
      ]),
    );
    // Each pipeline step input is validated as its own document against the P&T input schema.
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^composition\.yaml: Composition\/broken: spec\.pipeline\[0\]\.input\.resources\[0\]\.patches\[0\]\.type: Unsupported value: "FromSomewhere": supported values: .*"FromCompositeFieldPath"/,
        ),
        'composition.yaml: Composition/broken: spec.pipeline[0].input.resources[0].colour: unknown field "colour" (not declared in the schema)',
        // Composed-resource bases are checked as partial objects against their CRD (provider-anynines here).
        'composition.yaml: Composition/broken: spec.pipeline[0].input.resources[0].base.spec.forProvider.acceptsIncomplete: Invalid value: "yes": must be of type boolean',
      ]),
    );
    expect(lines.find((l) => l.startsWith('broken.yaml: document 1: (object): YAML error:'))).toBeDefined();
    expect(lines.some((l) => l.includes('PostgresqlInstance/app/ok'))).toBe(false);
    expect(r.unknownKinds).toEqual(['example.org/v1alpha1 Gadget']);
    expect(r.ok).toBe(false);
  });

  it('--strict turns kinds without schema into errors', () => {
    const r = validateDirectory(bad, { strict: true });
    expect(r.issues.map(formatIssue)).toContain(
      'gadget.yaml: Gadget/argocd/cp: (object): no schema for example.org/v1alpha1 Gadget, so it is not checked: give the folder with its CRD or XRD (klutch-kit validate --schemas <folder>), or allow unknown kinds (--allow-unknown-kinds)',
    );
  });

  it('a CRD in the folder makes its kind known', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kk-validate-crd-'));
    try {
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.example.org' },
        spec: {
          group: 'example.org',
          names: { kind: 'Gadget', plural: 'gadgets' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1alpha1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', required: ['project'], properties: { project: { type: 'string' } } } },
                },
              },
            },
          ],
        },
      };
      writeFileSync(
        join(dir, 'a.yaml'),
        yaml(crd, { apiVersion: 'example.org/v1alpha1', kind: 'Gadget', metadata: { name: 'cp', namespace: 'argocd' }, spec: {} }),
      );
      const r = validateDirectory(dir, { strict: true });
      expect(r.issues.map(formatIssue)).toEqual(['a.yaml: Gadget/argocd/cp: spec.project: Required value']);
      expect(r.schemaChecked).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('only the chosen Crossplane release is used when one is given', () => {
    const r = validateDirectory(bad, { crossplane: ['1.20'] });
    expect(r.issues.some((l) => l.object === 'Composition/legacy')).toBe(false);
  });

  it('a path that is not a folder is an error naming it', () => {
    expect(() => validateDirectory(join(bad, 'claims.yaml'))).toThrow(`validate: ${JSON.stringify(join(bad, 'claims.yaml'))} is not a directory`);
  });
});

describe('klutch-kit validate', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
  };

  it('exits 0 with a summary for a valid folder', () => {
    const c = capture();
    expect(runValidate(good, {}, c.io)).toBe(0);
    expect(c.err).toEqual([]);
    expect(c.out).toEqual([`validate ${good}: 17 object(s) in 8 file(s): 8 checked against schemas, 9 built-in kind(s) checked for shape only; 0 error(s)`]);
  });

  it('exits 1 and lists the errors for an invalid folder', () => {
    const c = capture();
    expect(runValidate(bad, { crossplane: '2' }, c.io)).toBe(1);
    expect(c.err).toContain('claims.yaml: PostgresqlInstance/app/wrong-service: spec: Unsupported service used for postgresql');
    expect(c.err[c.err.length - 1]).toMatch(
      /^validate .*: 10 object\(s\) in 9 file\(s\): 8 checked against schemas, 0 built-in kind\(s\) checked for shape only, 1 kind\(s\) without schema \(example.org\/v1alpha1 Gadget\); \d+ error\(s\)$/,
    );
    expect(() => runValidate(bad, { crossplane: '3' }, c.io)).toThrow('validate --crossplane: expected 2, 1.20 or both, got "3"');
  });

  it('registers as a commander subcommand that sets the exit code', async () => {
    const program = registerValidateCommand(new Command('klutch-kit').exitOverride());
    const saved = process.exitCode;
    const write = process.stdout.write;
    const writeErr = process.stderr.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      await program.parseAsync(['node', 'klutch-kit', 'validate', bad, '--crossplane', '1.20']);
      expect(process.exitCode).toBe(1);
      await program.parseAsync(['node', 'klutch-kit', 'validate', good]);
      expect(process.exitCode).toBe(0);
    } finally {
      process.stdout.write = write;
      process.stderr.write = writeErr;
      process.exitCode = saved;
    }
  });
});

describe('schema folders', () => {
  it('claims of an app-cluster folder are validated with the XRDs of the control-plane folder', () => {
    const app = mkdtempSync(join(tmpdir(), 'kk-validate-app-'));
    try {
      writeFileSync(join(app, 'claims.yaml'), yaml(claim('db', a9s), claim('bad', { ...a9s, plan: 'postgresql-single-huge' })));
      const alone = validateDirectory(app);
      expect(alone.unknownKinds).toEqual(['anynines.com/v1 PostgresqlInstance']);
      expect(alone.ok).toBe(true);
      const r = validateDirectory(app, { schemaDirs: [good] });
      expect(r.issues.map(formatIssue)).toEqual(['claims.yaml: PostgresqlInstance/app/bad: spec: Unsupported plan used for postgresql']);
      expect(r).toMatchObject({ objects: 2, schemaChecked: 2, unknownKinds: [] });
      const c: string[] = [];
      expect(runValidate(app, { schemas: [good] }, { out: (l) => c.push(l), err: (l) => c.push(l) })).toBe(1);
      expect(c[0]).toBe('claims.yaml: PostgresqlInstance/app/bad: spec: Unsupported plan used for postgresql');
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});
