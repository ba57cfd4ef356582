/**
 * House rules that CONTRIBUTING.md states, checked over the product sources so they stay true:
 * closed sets are enum-like classes (no TypeScript `enum`), and Kubernetes is spoken to through one
 * REST client (runtime/core/client.ts); constructs wire themselves by references and registration, not by
 * searching the tree or matching names.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../', import.meta.url));
const PRODUCT = ['constructs', 'contract', 'runtime', 'stacks', 'sandbox', 'scripts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const files = PRODUCT.flatMap((d) => sources(join(repo, d))).map((p) => ({ path: relative(repo, p), text: readFileSync(p, 'utf8') }));

/** `file:line: text` of every line matching `re`, comments excluded. */
function hits(re: RegExp, keep: (path: string) => boolean = () => true): string[] {
  return files
    .filter((f) => keep(f.path))
    .flatMap((f) => f.text.split('\n').flatMap((line, i) => (re.test(line) && !/^\s*(\/\/|\*)/.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])));
}

test('the scan sees the product sources', () => {
  expect(files.length).toBeGreaterThan(100);
  expect(files.some((f) => f.path === 'runtime/core/client.ts')).toBe(true);
});

test('no TypeScript enum: closed sets are enum-like classes (CONTRIBUTING)', () => {
  expect(hits(/^\s*(export\s+)?(declare\s+)?(const\s+)?enum\s+\w+/)).toEqual([]);
});

// bench:abuse is the exception on purpose: it plays an unauthenticated client of the backend (raw bodies,
// malformed cookies, no connection reuse), not a Kubernetes client.
const RAW_HTTP_ALLOWED = ['runtime/core/client.ts', 'runtime/realinfra/probe.ts', 'scripts/bench-abuse.ts'];
test('one REST client: only runtime/core/client.ts sends HTTP requests with node:http(s) (and the harness health probes, bench:abuse)', () => {
  expect(hits(/\b(https?|mod)\.(request|get)\(/, (p) => !RAW_HTTP_ALLOWED.includes(p))).toEqual([]);
});

// What a cluster holds, what a Configuration package carries and which clusters synthTopology renders are
// registered by what is created in them; no file searches the tree. (`findAll` as the CEL regex function
// in validate/cel-k8s.ts is a string, not a call on a construct node.)
const TREE_SEARCH = /\bnode\.findAll\(/;
test('no tree search in constructs/: what a cluster or package holds is registered by what is created in it, not found with node.findAll() (issue 25)', () => {
  expect(hits(TREE_SEARCH, (p) => p.startsWith('constructs/'))).toEqual([]);
  // The rule catches a search written either way, and not the CEL function.
  expect(['for (const c of this.node.findAll()) {', 'const all = app.node.findAll(ConstructOrder.POSTORDER);'].filter((l) => TREE_SEARCH.test(l))).toHaveLength(
    2,
  );
  expect(TREE_SEARCH.test("celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (re) {")).toBe(false);
});

test('no ProviderConfig matched by name in constructs/: backends take IProviderConfig references (issue 25)', () => {
  expect(hits(/providerConfigName|registerExports/, (p) => p.startsWith('constructs/'))).toEqual([]);
});
