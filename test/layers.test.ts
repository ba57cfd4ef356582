/**
 * Layer boundaries (CONTRIBUTING "Layout"): the contract (contract/) is the only home of the
 * binding's names, groups, RBAC and resource tables; the runtime imports the contract, never the
 * constructs. Checked two ways: the ESLint rule of eslint.config.js (static imports, in the editor
 * and in `npm run lint`) and the checks of test/support/layers.ts over every product source
 * (also dynamic `import()` and contract literals). Each is shown to fail on a planted violation.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contractLiteralsOutside, runtimeImportsOfConstructs, type Allowed, type SourceFile } from './support/layers.js';

const repo = fileURLToPath(new URL('../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}
const read = (dirs: string[]): SourceFile[] =>
  dirs.flatMap((d) => sources(join(repo, d))).map((p) => ({ path: relative(repo, p).split(sep).join('/'), text: readFileSync(p, 'utf8') }));

/**
 * Runtime modules that drive the constructs on purpose. The runtime programs (core, backend,
 * konnector, image, xpkg) have none; eslint.config.js forbids their static imports of constructs/.
 */
const ALLOWED: Allowed[] = [
  { path: 'runtime/cli/', why: 'the klutch-kit command is the constructs’ command line: validate and graph run the construct library' },
  { path: 'runtime/realinfra/', why: 'the real-cluster harness installs Crossplane and its packages with the Crossplane constructs, as users do' },
  {
    path: 'runtime/kubectl-bind/apiservice.ts',
    why: 'installs the Konnector construct’s manifests (loaded on demand), so that a konnector installed by the CLI equals the GitOps one',
  },
];

// Product code; scripts/ and test/ assert rendered names from the outside, with literals on purpose.
const PRODUCT = read(['constructs', 'contract', 'runtime', 'stacks', 'sandbox']);

describe('layers over the repository', () => {
  it('sees the product sources', () => {
    expect(PRODUCT.length).toBeGreaterThan(100);
    expect(PRODUCT.some((f) => f.path === 'runtime/backend/binder.ts')).toBe(true);
  });

  it('no runtime module imports constructs/, except the named tools (and every exception is still needed)', () => {
    const { offenders, unusedAllowed } = runtimeImportsOfConstructs(PRODUCT, ALLOWED);
    expect(offenders).toEqual([]);
    expect(unusedAllowed).toEqual([]);
  });

  it('no contract name (binder role, API groups, kinds, keys, condition types, …) is spelled out as a literal outside contract/, and no binding-group key twice', () => {
    expect(contractLiteralsOutside(PRODUCT)).toEqual([]);
  });
});

describe('the checks fail on planted violations', () => {
  const planted: SourceFile[] = [
    { path: 'runtime/backend/x.ts', text: "import { fail } from '../../constructs/_errors.js';\nexport const a = 1;\n" },
    { path: 'runtime/konnector/y.ts', text: "export async function f() {\n  return import('../../constructs/runtime/index.js');\n}\n" },
    { path: 'runtime/core/z.ts', text: "export { show } from '../../constructs/_errors.js';\n" },
    {
      path: 'runtime/core/fine.ts',
      text: "import { fail } from '../../contract/_errors.js';\n// import { x } from '../../constructs/y.js'\nexport const b = 2;\n",
    },
  ];

  it('a runtime → constructs import, static, re-exported or dynamic, is reported with file and line', () => {
    expect(runtimeImportsOfConstructs(planted).offenders).toEqual([
      'runtime/backend/x.ts:1: ../../constructs/_errors.js',
      'runtime/konnector/y.ts:2: ../../constructs/runtime/index.js',
      'runtime/core/z.ts:1: ../../constructs/_errors.js',
    ]);
  });

  it('an exception covers its own module only, and a stale exception is reported', () => {
    const r = runtimeImportsOfConstructs(planted, [
      { path: 'runtime/backend/', why: 'planted' },
      { path: 'runtime/image/', why: 'stale' },
    ]);
    expect(r.offenders).toEqual(['runtime/konnector/y.ts:2: ../../constructs/runtime/index.js', 'runtime/core/z.ts:1: ../../constructs/_errors.js']);
    expect(r.unusedAllowed).toEqual(['runtime/image/']);
  });

  it('contract literals outside contract/ are reported; comments, other names and contract/ itself are not', () => {
    const files: SourceFile[] = [
      {
        path: 'runtime/backend/roles.ts',
        text: [
          "/** The ClusterRole 'klutch-binder' (comments do not count). */",
          "export const SA = 'klutch-binder';",
          'export const perConsumer = (ns: string) => `klutch-binder-${ns}`;',
          "export const rule = { apiGroups: ['klutch.anynines.com'] };",
          'export const template = `example-backend.klutch.anynines.com`;',
          "export const annotation = 'klutch.anynines.com/bound';",
          "export const other = 'klutch-backend';",
          "export const version = 'klutch.anynines.com/v1alpha1';",
        ].join('\n'),
      },
      { path: 'contract/binder-rbac.ts', text: "export const BINDER_NAME = 'klutch-binder';\n" },
    ];
    expect(contractLiteralsOutside(files)).toEqual([
      'runtime/backend/roles.ts:2: "klutch-binder"',
      'runtime/backend/roles.ts:3: "klutch-binder-"',
      'runtime/backend/roles.ts:4: "klutch.anynines.com"',
      'runtime/backend/roles.ts:5: "example-backend.klutch.anynines.com"',
      'runtime/backend/roles.ts:6: "klutch.anynines.com/bound"',
      'runtime/backend/roles.ts:8: "klutch.anynines.com/v1alpha1"',
    ]);
  });

  it('every name the contract exports counts (kinds, plurals, condition types, the konnector namespace), but not its generic words nor a reason', () => {
    const files: SourceFile[] = [
      {
        path: 'runtime/konnector/x.ts',
        text: [
          "export const ns = 'klutch-bind';",
          "export const isBinding = (o: { kind: string }) => o.kind === 'APIServiceBinding';",
          "export const rule = { resources: ['apiserviceexports'] };",
          "export const cond = { type: 'ExportsReady', status: 'True', reason: 'Heartbeating' };",
          "export const generic = { type: 'Ready', phase: 'Pending', name: 'cluster', key: 'kubeconfig' };",
          "export const crd = 'clusterbindings.klutch.anynines.com';",
        ].join('\n'),
      },
    ];
    expect(contractLiteralsOutside(files)).toEqual([
      'runtime/konnector/x.ts:1: "klutch-bind"',
      'runtime/konnector/x.ts:2: "APIServiceBinding"',
      'runtime/konnector/x.ts:3: "apiserviceexports"',
      'runtime/konnector/x.ts:4: "ExportsReady"',
      'runtime/konnector/x.ts:6: "clusterbindings.klutch.anynines.com"',
    ]);
  });

  it('a key under the binding groups that is not the contract’s is declared once: a second spelling is reported with the first', () => {
    const files: SourceFile[] = [
      { path: 'runtime/kubectl-bind/a.ts', text: "export const LABEL = 'klutch.anynines.com/provider-kubeconfig';\n" },
      { path: 'runtime/kubectl-bind/b.ts', text: "\nconst sel = { labelSelector: 'klutch.anynines.com/provider-kubeconfig' };\n" },
      { path: 'runtime/backend/c.ts', text: "export const ISSUER = 'example-backend.klutch.anynines.com/issuer';\n" },
    ];
    expect(contractLiteralsOutside(files)).toEqual([
      'runtime/kubectl-bind/b.ts:2: "klutch.anynines.com/provider-kubeconfig" (declared at runtime/kubectl-bind/a.ts:1)',
    ]);
  });

  it('the ESLint rule of eslint.config.js rejects a static runtime → constructs import and a contract → runtime import', () => {
    const cases: Array<[string, string]> = [
      ['runtime/backend/planted.ts', "import { fail } from '../../constructs/_errors.js';\nexport const f = fail;\n"],
      ['runtime/konnector/planted.ts', "import { App } from 'cdk8s';\nexport const a = App;\n"],
      ['contract/planted.ts', "import type { KubeClient } from '../runtime/core/client.js';\nexport type K = KubeClient;\n"],
      ['runtime/backend/planted.ts', "import { fail } from '../../contract/_errors.js';\nexport const f = fail;\n"],
    ];
    // ESLint in a child process (as `npm run lint` runs it), on texts given the paths they would have.
    const script = `
      import { ESLint } from 'eslint';
      const eslint = new ESLint({ cwd: process.cwd() });
      const out = [];
      for (const [path, code] of JSON.parse(process.argv[1])) {
        const [r] = await eslint.lintText(code, { filePath: path });
        out.push(r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.line));
      }
      process.stdout.write(JSON.stringify(out));`;
    const lines = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(cases)], { cwd: repo, encoding: 'utf8' }));
    expect(lines).toEqual([[1], [1], [1], []]);
  }, 60_000);
});
