/**
 * Copies the reference CRDs klutch-kit builds on from the shared reference folder
 * (`../shared/reference`, or $KLUTCH_REFERENCE) into `imports/crds/`, byte for byte, and writes
 * `imports/crds/SOURCES.md` (origin file, upstream repository, tag, commit, sha256). A group whose release the
 * reference does not hold is read from its Go module instead (`goModule`: `go mod download`, checked against
 * the checksum database, into the Go module cache).
 *
 *   npx tsx scripts/vendor-reference.ts            # copy + write SOURCES.md
 *   npx tsx scripts/vendor-reference.ts --check    # fail when imports/crds differs from the reference
 *
 * Run it only when the reference changes; `npm run import` then works offline from imports/crds.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const reference = resolve(process.env.KLUTCH_REFERENCE ?? join(root, '..', 'shared', 'reference'));
const out = join(root, 'imports', 'crds');

interface Group {
  /** Folder under imports/crds. */
  dir: string;
  /** Folder under the reference, or under the Go module's root with `goModule`. */
  from: string;
  /** `module@version` to read `from` in, instead of the reference folder. */
  goModule?: string;
  files: string[];
  origin: string;
}

const XP_FILES = [
  'apiextensions.crossplane.io_compositeresourcedefinitions.yaml',
  'apiextensions.crossplane.io_compositions.yaml',
  'apiextensions.crossplane.io_compositionrevisions.yaml',
  'apiextensions.crossplane.io_environmentconfigs.yaml',
  'pkg.crossplane.io_providers.yaml',
  'pkg.crossplane.io_functions.yaml',
  'pkg.crossplane.io_configurations.yaml',
  'pkg.crossplane.io_deploymentruntimeconfigs.yaml',
];

const VENDORED: Group[] = [
  {
    dir: 'crossplane/v2',
    from: 'crossplane',
    files: XP_FILES,
    origin:
      '`github.com/crossplane/crossplane` tag `v2.3.4`, commit `c2670a735103660d7f436585447f2071bc1de973`, `cluster/crds/` (DeploymentRuntimeConfig with `cluster/crd-patches/` applied)',
  },
  {
    dir: 'crossplane/v1.20',
    from: 'cluster/crds',
    goModule: 'github.com/crossplane/crossplane@v1.20.13',
    files: XP_FILES,
    origin:
      '`github.com/crossplane/crossplane` tag `v1.20.13`, commit `c562034c1158e7050813f36aa3bd2529bf44d10f`, `cluster/crds/` (from its Go module: the reference folder holds v1.20.11)',
  },
  {
    dir: 'provider-kubernetes',
    from: 'crossplane',
    files: [
      'kubernetes.crossplane.io_objects.yaml',
      'kubernetes.crossplane.io_providerconfigs.yaml',
      'kubernetes.m.crossplane.io_objects.yaml',
      'kubernetes.m.crossplane.io_providerconfigs.yaml',
      'kubernetes.m.crossplane.io_clusterproviderconfigs.yaml',
    ],
    origin: '`github.com/crossplane-contrib/provider-kubernetes` tag `v1.2.1`, commit `0ea671a4dab090ff3b14877d35086f1950fa35e3`, `package/crds/`',
  },
  {
    dir: 'function-patch-and-transform',
    from: 'crossplane',
    files: ['pt.fn.crossplane.io_resources.yaml'],
    origin:
      "`github.com/crossplane-contrib/function-patch-and-transform` tag `v0.10.8`, commit `6b35ed851b91bb9d0e59e0bd98cdad06b045d873`, `package/input/`. The schema bundle adds the string transform types `Join`, `Replace` and the conversion `ToAdler32` that the function accepts but this file's enums omit.",
  },
  {
    dir: 'provider-anynines',
    from: 'klutch',
    files: [
      'dataservices.anynines.com_backups.yaml',
      'dataservices.anynines.com_providerconfigs.yaml',
      'dataservices.anynines.com_providerconfigusages.yaml',
      'dataservices.anynines.com_restores.yaml',
      'dataservices.anynines.com_servicebindings.yaml',
      'dataservices.anynines.com_serviceinstances.yaml',
      'dataservices.anynines.com_storeconfigs.yaml',
    ],
    origin: '`github.com/anynines/klutchio` commit `0b4539e` (after release 1.5.0), `provider-anynines/package/crds/`',
  },
  {
    dir: 'a8s',
    from: 'a8s',
    files: [
      'postgresqls.postgresql.anynines.com.yaml',
      'servicebindings.servicebindings.anynines.com.yaml',
      'backups.backups.anynines.com.yaml',
      'restores.backups.anynines.com.yaml',
    ],
    origin:
      "`github.com/anynines/a8s-deployment` commit `f588f65` (CHANGELOG v1.2.0), from `deploy/a8s/manifests/postgresql-operator.yaml`, `service-binding-controller.yaml` and `backup-manager.yaml`. The a8s operators' own CRDs: applied by the sandbox (whose SandboxA8sOperator reconciles them) and by real-cluster tests; not part of the schema bundle. The service-binding controller writes Secret `<binding>-service-binding`, type Opaque, keys `username`, `password`, `database`, `instance_service`; the port is always 5432 (a8s-deployment `docs/application-developers/usage_overview.md`).",
  },
  {
    dir: 'klutch-reference',
    from: 'klutch',
    files: [
      'klutch.anynines.com_apiserviceexports.yaml',
      'klutch.anynines.com_apiserviceexportrequests.yaml',
      'klutch.anynines.com_apiservicebindings.yaml',
      'klutch.anynines.com_apiservicenamespaces.yaml',
      'klutch.anynines.com_clusterbindings.yaml',
      'klutch.anynines.com_appclusterbindings.yaml',
      'example-backend.klutch.anynines.com_apiserviceexporttemplates.yaml',
    ],
    origin:
      "`github.com/anynines/klutchio` commit `0b4539e`, `bind/deploy/crd/` and `bind/contrib/deploy/crd/`. Used only by the compatibility test (test/api): klutch-kit's own binding CRDs are generated from contract/api into contract/api/crds/.",
  },
];

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

const moduleDirs = new Map<string, string>();
/** The folder of `module@version` in the Go module cache (`go mod download`, verified against the checksum database). */
function moduleDir(id: string): string {
  let dir = moduleDirs.get(id);
  if (!dir) {
    const info = JSON.parse(execFileSync(process.env.KLUTCH_KIT_GO ?? 'go', ['mod', 'download', '-json', id], { cwd: root, encoding: 'utf8' })) as {
      Dir?: string;
      Error?: string;
    };
    if (!info.Dir) {
      console.error(`vendor-reference: go mod download ${id}: ${info.Error ?? 'no Dir in the output'}`);
      process.exit(2);
    }
    dir = info.Dir;
    moduleDirs.set(id, dir);
  }
  return dir;
}

function main(): void {
  const check = process.argv.includes('--check');
  if (!existsSync(reference)) {
    console.error(`vendor-reference: reference folder ${reference} not found (set KLUTCH_REFERENCE)`);
    process.exit(2);
  }
  const rows: string[] = [];
  const differ: string[] = [];
  for (const g of VENDORED) {
    mkdirSync(join(out, g.dir), { recursive: true });
    for (const f of g.files) {
      const src = g.goModule ? join(moduleDir(g.goModule), g.from, f) : join(reference, g.from, f);
      if (!existsSync(src)) {
        console.error(`vendor-reference: ${src} is missing from ${g.goModule ?? 'the reference'}`);
        process.exit(2);
      }
      const data = readFileSync(src);
      const dst = join(out, g.dir, f);
      if (check) {
        if (!existsSync(dst) || !readFileSync(dst).equals(data)) differ.push(`imports/crds/${g.dir}/${f}`);
      } else writeFileSync(dst, data);
      rows.push(`| \`${g.dir}/${f}\` | \`${g.goModule ? `${g.goModule}/` : ''}${g.from}/${f}\` | \`${sha256(data).slice(0, 16)}\` |`);
    }
  }
  const md = [
    '# Sources of imports/crds',
    '',
    'Byte-for-byte copies of upstream CRD files, taken from the shared reference folder by',
    '`npm run import:vendor` (scripts/vendor-reference.ts; never edit them by hand). `npm run import` turns them',
    "(plus klutch-kit's own binding CRDs from `contract/api/crds/`) into `imports/*.ts` with",
    '`cdk8s import`, and into `imports/schema-bundle.json` for `klutch-kit validate`.',
    '',
    '## Upstream origin per folder',
    '',
    ...VENDORED.map((g) => `- \`${g.dir}/\`: ${g.origin}`),
    '- `prometheus-operator/`: not from the reference folder (this script leaves it alone); its own `SOURCES.md` names the upstream tag, commit and checksums.',
    "- `argo-cd/`: Argo CD's Application CRD, not from the reference folder (this script leaves it alone); its own `SOURCES.md` names the upstream tag, commit and checksum.",
    '- `units/`: no upstream files: the inputs of `cdk8s import` (the CRD files above concatenated per import unit) written by `npm run import` (scripts/import-units.ts) and named in cdk8s.yaml, so `npx cdk8s import` regenerates `imports/*.ts`.',
    '',
    '## Files',
    '',
    '| file here | file in the reference folder (or the Go module) | sha256 (first 16 hex) |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  const mdPath = join(out, 'SOURCES.md');
  if (check) {
    if (!existsSync(mdPath) || readFileSync(mdPath, 'utf8') !== md) differ.push('imports/crds/SOURCES.md');
    if (differ.length) {
      console.error(`vendor-reference --check: these files differ from the reference:\n  ${differ.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`vendor-reference --check: ${rows.length} files match the reference`);
    return;
  }
  writeFileSync(mdPath, md);
  console.log(`vendor-reference: copied ${rows.length} files into imports/crds`);
}

main();
