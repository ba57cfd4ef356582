/**
 * Regenerates everything derived from CRD files, offline:
 *
 * 1. `constructs/api/crds/*.yaml`: klutch-kit's binding CRDs, rendered from constructs/api;
 * 2. `imports/*.ts`: typed cdk8s constructs, by `cdk8s import` of the pinned CRD files in
 *    `imports/crds/` (vendored by scripts/vendor-reference.ts) and of the binding CRDs, each unit
 *    under its own import name so no two write the same file;
 * 3. `imports/schema-bundle.json`: the schemas `klutch-kit validate` uses at run time.
 *
 *   npm run import          # write the files
 *   npm run import:check    # regenerate into a temp dir; exit 1 naming every file that differs
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { renderBindingCrdFiles } from '../constructs/api/crds.js';
import { buildSchemaBundle, patchPatchAndTransformEnums } from '../constructs/validate/bundle.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const crdsDir = join(root, 'imports', 'crds');

/** One `cdk8s import NAME:=file` unit: the files are concatenated into one multi-document input. */
interface ImportUnit {
  readonly name: string;
  /** Paths relative to the repo root. */
  readonly files: readonly string[];
  /** Applies the function-patch-and-transform enum fix (see imports/crds/SOURCES.md). */
  readonly patchPt?: boolean;
  /** `--class-prefix` (provider-kubernetes: a class named `Object` would shadow the global). */
  readonly classPrefix?: string;
}

const xp = (f: string) => `imports/crds/crossplane/v2/${f}`;

const IMPORT_UNITS: readonly ImportUnit[] = [
  {
    // imports/crossplane-apiextensions.crossplane.io.ts, imports/crossplane-pkg.crossplane.io.ts
    name: 'crossplane',
    files: [
      xp('apiextensions.crossplane.io_compositeresourcedefinitions.yaml'),
      xp('apiextensions.crossplane.io_compositions.yaml'),
      xp('pkg.crossplane.io_providers.yaml'),
      xp('pkg.crossplane.io_functions.yaml'),
      xp('pkg.crossplane.io_configurations.yaml'),
      xp('pkg.crossplane.io_deploymentruntimeconfigs.yaml'),
    ],
  },
  {
    // imports/provider-kubernetes-kubernetes.crossplane.io.ts, imports/provider-kubernetes-kubernetes.m.crossplane.io.ts
    // (classes KubernetesObject, KubernetesProviderConfig, KubernetesClusterProviderConfig)
    name: 'provider-kubernetes',
    classPrefix: 'Kubernetes',
    files: [
      'imports/crds/provider-kubernetes/kubernetes.crossplane.io_objects.yaml',
      'imports/crds/provider-kubernetes/kubernetes.crossplane.io_providerconfigs.yaml',
      'imports/crds/provider-kubernetes/kubernetes.m.crossplane.io_objects.yaml',
      'imports/crds/provider-kubernetes/kubernetes.m.crossplane.io_providerconfigs.yaml',
      'imports/crds/provider-kubernetes/kubernetes.m.crossplane.io_clusterproviderconfigs.yaml',
    ],
  },
  {
    // imports/patch-and-transform-pt.fn.crossplane.io.ts
    name: 'patch-and-transform',
    files: ['imports/crds/function-patch-and-transform/pt.fn.crossplane.io_resources.yaml'],
    patchPt: true,
  },
  {
    // imports/provider-anynines-dataservices.anynines.com.ts
    name: 'provider-anynines',
    files: readdirSync(join(crdsDir, 'provider-anynines'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `imports/crds/provider-anynines/${f}`),
  },
  {
    // imports/prometheus-operator-monitoring.coreos.com.ts (ServiceMonitor, PodMonitor, PrometheusRule)
    name: 'prometheus-operator',
    files: readdirSync(join(crdsDir, 'prometheus-operator'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `imports/crds/prometheus-operator/${f}`),
  },
  {
    // imports/klutch-klutch.anynines.com.ts, imports/klutch-example-backend.klutch.anynines.com.ts
    name: 'klutch',
    files: [...renderBindingCrdFiles().keys()].sort().map((f) => `constructs/api/crds/${f}`),
  },
];

async function run(outRoot: string): Promise<{ ms: Record<string, number> }> {
  const ms: Record<string, number> = {};
  const t0 = Date.now();
  // 1. Binding CRDs.
  const apiCrds = join(outRoot, 'constructs', 'api', 'crds');
  rmSync(apiCrds, { recursive: true, force: true });
  mkdirSync(apiCrds, { recursive: true });
  for (const [f, text] of renderBindingCrdFiles()) writeFileSync(join(apiCrds, f), text);
  ms.crds = Date.now() - t0;

  // 2. cdk8s import.
  const t1 = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'klutch-kit-import-'));
  const importsOut = join(outRoot, 'imports');
  mkdirSync(importsOut, { recursive: true });
  for (const f of readdirSync(importsOut)) if (f.endsWith('.ts')) rmSync(join(importsOut, f));
  try {
    const specs: Array<{ spec: string; prefix?: string }> = [];
    for (const u of IMPORT_UNITS) {
      const docs: unknown[] = [];
      for (const f of u.files) {
        const abs = f.startsWith('constructs/api/crds/') ? join(apiCrds, f.slice('constructs/api/crds/'.length)) : join(root, f);
        for (const d of parseAllDocuments(readFileSync(abs, 'utf8'))) {
          const js = d.toJS();
          if (js) docs.push(js);
        }
      }
      if (u.patchPt) docs.forEach(patchPatchAndTransformEnums);
      const input = join(work, `${u.name}.yaml`);
      writeFileSync(input, docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'));
      specs.push({ spec: `${u.name}:=${input}`, prefix: u.classPrefix });
    }
    // `cdk8s import` takes one spec per run; run them side by side (one per CPU, at most 3).
    const bin = join(root, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s');
    const runOne = ({ spec, prefix }: { spec: string; prefix?: string }) =>
      new Promise<void>((res, rej) => {
        const args = [bin, 'import', '--no-check-upgrade', '--no-save', '-l', 'typescript', '-o', importsOut];
        if (prefix) args.push('--class-prefix', prefix);
        const child = spawn(process.execPath, [...args, spec], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
        let log = '';
        child.stdout.on('data', (d) => (log += d));
        child.stderr.on('data', (d) => (log += d));
        child.on('error', rej);
        child.on('close', (code) => (code === 0 ? res() : rej(new Error(`cdk8s import ${spec} exited with ${code}:\n${log}`))));
      });
    const queue = [...specs];
    const workers = Array.from({ length: Math.min(3, Math.max(1, availableParallelism()), queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await runOne(next);
    });
    await Promise.all(workers);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  ms.cdk8sImport = Date.now() - t1;

  // 3. Schema bundle.
  const t2 = Date.now();
  writeFileSync(join(importsOut, 'schema-bundle.json'), JSON.stringify(buildSchemaBundle(crdsDir)) + '\n');
  ms.bundle = Date.now() - t2;
  return { ms };
}

/** Files produced by `run`, relative to its output root. */
function producedFiles(outRoot: string): string[] {
  const out: string[] = [];
  const apiCrds = join(outRoot, 'constructs', 'api', 'crds');
  if (existsSync(apiCrds)) for (const f of readdirSync(apiCrds)) out.push(`constructs/api/crds/${f}`);
  const imp = join(outRoot, 'imports');
  if (existsSync(imp)) for (const f of readdirSync(imp)) if (f.endsWith('.ts') || f === 'schema-bundle.json') out.push(`imports/${f}`);
  return out.sort();
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const t0 = Date.now();
  if (!check) {
    const { ms } = await run(root);
    console.log(`import: wrote ${producedFiles(root).length} files in ${Date.now() - t0} ms (${JSON.stringify(ms)})`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-import-check-'));
  try {
    await run(tmp);
    const fresh = producedFiles(tmp);
    const committed = producedFiles(root);
    const differ: string[] = [];
    for (const f of fresh) {
      const p = join(root, f);
      if (!existsSync(p)) differ.push(`${f} (missing; run npm run import)`);
      else if (!readFileSync(p).equals(readFileSync(join(tmp, f)))) differ.push(`${f} (differs from regenerated output)`);
    }
    for (const f of committed) if (!fresh.includes(f)) differ.push(`${f} (not produced by npm run import; remove it)`);
    if (differ.length) {
      console.error(`import:check: ${differ.length} generated file(s) are out of date:\n  ${differ.join('\n  ')}\nRun \`npm run import\` and commit the result.`);
      process.exit(1);
    }
    console.log(`import:check: ${fresh.length} generated files are up to date (${Date.now() - t0} ms)`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`import: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
