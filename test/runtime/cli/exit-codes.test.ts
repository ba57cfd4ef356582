/**
 * `klutch-kit` exit codes (runtime/cli/errors.ts, README "Exit codes"): 0 done, 1 invalid objects,
 * 2 usage (bad flags or arguments, missing or empty input), 3 the command failed; and what
 * `validate` says about skipped files, empty folders and a forgotten `--schemas`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ExitCode, exitCodeOf, UsageError } from '../../../runtime/cli/errors.js';
import { main } from '../../../runtime/cli/main.js';
import { runValidate, schemaFoldersFor } from '../../../runtime/cli/validate.js';

let root: string;
const configMap = (name: string, data: Record<string, unknown> = { a: 'b' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'd' },
  data,
});
const xrd = {
  apiVersion: 'apiextensions.crossplane.io/v1',
  kind: 'CompositeResourceDefinition',
  metadata: { name: 'xqueues.queues.example.com' },
  spec: {
    group: 'queues.example.com',
    names: { kind: 'XQueue', plural: 'xqueues' },
    claimNames: { kind: 'Queue', plural: 'queues' },
    versions: [
      {
        name: 'v1',
        served: true,
        referenceable: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
      },
    ],
  },
};
const claim = (size: unknown) => ({ apiVersion: 'queues.example.com/v1', kind: 'Queue', metadata: { name: 'q', namespace: 'app' }, spec: { size } });

/** A folder under the test's root with these files (name → content). */
function folder(name: string, files: Record<string, string>): string {
  const d = join(root, name);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(d, f, '..'), { recursive: true });
    writeFileSync(join(d, f), text);
  }
  mkdirSync(d, { recursive: true });
  return d;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kk-exit-codes-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs `klutch-kit …`; returns the exit code and what went to stderr and stdout. */
async function cli(...args: string[]): Promise<{ code: number; err: string; out: string }> {
  let err = '';
  let out = '';
  const { stdout, stderr } = process;
  const stdoutWrite = stdout.write;
  const stderrWrite = stderr.write;
  stdout.write = ((s: string) => ((out += s), true)) as typeof stdout.write;
  stderr.write = ((s: string) => ((err += s), true)) as typeof stderr.write;
  try {
    await main(['node', 'klutch-kit', ...args], { write: (s: string) => (err += s) });
  } finally {
    stdout.write = stdoutWrite;
    stderr.write = stderrWrite;
  }
  return { code: Number(process.exitCode ?? 0), err, out };
}

const lines = () => {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  return { out, err, progress, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), progress: (l: string) => progress.push(l) } };
};

// Every test here runs the CLI in-process, which sets process.exitCode: reset it after each.
afterEach(() => {
  process.exitCode = undefined;
});

describe('klutch-kit exit codes', () => {
  it('2 for usage errors: unknown option, missing argument, no command, a missing folder', async () => {
    expect(await cli('validate', '--bogus', root)).toMatchObject({ code: ExitCode.USAGE, err: expect.stringContaining("unknown option '--bogus'") });
    expect(await cli('validate')).toMatchObject({ code: ExitCode.USAGE, err: expect.stringContaining("missing required argument 'dir'") });
    expect((await cli()).code).toBe(ExitCode.USAGE);
    expect(await cli('no-such-command')).toMatchObject({ code: ExitCode.USAGE });
    expect(await cli('validate', join(root, 'missing'))).toMatchObject({ code: ExitCode.USAGE, err: expect.stringContaining('is not a directory') });
  });

  it('2 for an empty folder, naming the files it skipped', async () => {
    const empty = folder('empty', {});
    expect(await cli('validate', empty)).toMatchObject({
      code: ExitCode.USAGE,
      err: expect.stringMatching(/no manifests \(\.yaml, \.yml, \.json\) under .*nothing to validate/),
    });
    const notes = folder('notes', { 'notes.txt': 'hi', 'sub/empty.yaml': '# nothing\n' });
    const r = await cli('validate', notes);
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.err).toContain('hold no Kubernetes objects');
    rmSync(join(notes, 'sub'), { recursive: true });
    expect((await cli('validate', notes)).err).toContain('skipped 1 file(s) that are not .yaml, .yml or .json: notes.txt');
  });

  it('0 for a valid folder, 1 for an invalid one; JSON manifests are validated, other files reported as skipped', async () => {
    const ok = folder('ok', { 'a.yaml': stringify(configMap('a')), 'b.json': JSON.stringify(configMap('b')), 'README.md': '# notes' });
    const good = await cli('validate', ok);
    expect(good).toMatchObject({ code: ExitCode.OK });
    expect(good.out).toMatch(/2 object\(s\) in 2 file\(s\).*; skipped 1 file\(s\) that are not \.yaml, \.yml or \.json: README\.md/);
    const bad = folder('bad', { 'b.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }) });
    expect(await cli('validate', bad)).toMatchObject({
      code: ExitCode.INVALID,
      err: expect.stringContaining('b.json: document 1 (ConfigMap): metadata.name: Required value'),
    });
  });

  it('3 when a command fails for another reason; usage errors are 2', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(2);
    expect(exitCodeOf(new Error('EACCES'))).toBe(3);
    expect(exitCodeOf('boom')).toBe(3);
  });

  it('0 for --help and --version', async () => {
    expect((await cli('--version')).code).toBe(ExitCode.OK);
    expect((await cli('validate', '--help')).code).toBe(ExitCode.OK);
  });

  it('2 for package build without a package source, naming the prop that makes one', async () => {
    const cwd = process.cwd();
    process.chdir(folder('project', {}));
    try {
      const r = await cli('package', 'build');
      expect(r.code).toBe(ExitCode.USAGE);
      expect(r.err).toContain("catalogueInstall: CatalogueInstall.configurationPackage({ package: '<registry>/<repository>:<tag>' })");
      expect(r.err).toContain('klutch-kit package build <folder>');
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('validate: claims whose definitions are in a folder beside it', () => {
  let dist: string;
  beforeAll(() => {
    dist = join(root, 'dist');
    folder('dist/control-plane', { '60-apis/xrd.yaml': stringify(xrd) });
    folder('dist/app', { '90-claims/q.yaml': stringify(claim(3)) });
    folder('dist/other', { 'x.yaml': stringify(xrd) }); // not a folder the synth wrote: not looked at
  });

  it('fails with the exact --schemas argument to add', () => {
    const { io, err } = lines();
    expect(runValidate(join(dist, 'app'), {}, io)).toBe(ExitCode.INVALID);
    expect(err[0]).toBe(
      `validate ${join(dist, 'app')}: queues.example.com/v1 Queue: not checked, their definitions are in ${join(dist, 'control-plane')}; add --schemas ${join(dist, 'control-plane')}`,
    );
    expect(schemaFoldersFor(join(dist, 'app'), ['queues.example.com/v1 Queue', 'v9 Other'])).toEqual(
      new Map([[join(dist, 'control-plane'), ['queues.example.com/v1 Queue']]]),
    );
  });

  it('passes with that argument, and checks the claims against the XRD', () => {
    const { io } = lines();
    expect(runValidate(join(dist, 'app'), { schemas: [join(dist, 'control-plane')] }, io)).toBe(ExitCode.OK);
    folder('dist/app', { '90-claims/q.yaml': stringify(claim('three')) });
    const bad = lines();
    expect(runValidate(join(dist, 'app'), { schemas: [join(dist, 'control-plane')] }, bad.io)).toBe(ExitCode.INVALID);
    expect(bad.err.join('\n')).toContain('spec.size');
    folder('dist/app', { '90-claims/q.yaml': stringify(claim(3)) });
  });

  it('a missing --schemas folder is a usage error', () => {
    expect(() => runValidate(join(dist, 'app'), { schemas: [join(dist, 'nope')] }, lines().io)).toThrow(UsageError);
  });
});

describe('validate: claims with no schema anywhere', () => {
  it('fails by default, naming the kind, --schemas and --allow-unknown-kinds; --allow-unknown-kinds accepts them unchecked', async () => {
    // An app cluster's folder on its own (no control-plane folder beside it): the claim's XRD is nowhere.
    const alone = folder('alone/app', { '90-claims/q.yaml': stringify(claim('not-a-size')) });
    const r = await cli('validate', alone);
    expect(r.code).toBe(ExitCode.INVALID);
    expect(r.err).toContain(
      '90-claims/q.yaml: Queue/app/q: (object): no schema for queues.example.com/v1 Queue, so it is not checked: give the folder with its CRD or XRD (klutch-kit validate --schemas <folder>), or allow unknown kinds (--allow-unknown-kinds)',
    );
    const allowed = await cli('validate', '--allow-unknown-kinds', alone);
    expect(allowed.code).toBe(ExitCode.OK);
    expect(allowed.out).toContain('1 kind(s) without schema (queues.example.com/v1 Queue); 0 error(s)');
    // --strict is still accepted (it is the default now) and changes nothing.
    expect((await cli('validate', '--strict', alone)).code).toBe(ExitCode.INVALID);
  });

  it("kustomize's kustomization.yaml is checked for shape only, not an unknown kind", () => {
    const d = folder('kustomized', {
      'a.yaml': stringify(configMap('a')),
      'kustomization.yaml': stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', metadata: { name: 'x' }, resources: ['a.yaml'] }),
    });
    const { io, out } = lines();
    expect(runValidate(d, {}, io)).toBe(ExitCode.OK);
    expect(out[0]).toContain('2 built-in kind(s) checked for shape only; 0 error(s)');
  });
});

describe('validate: progress', () => {
  it('reports each object, then clears the line, when the io takes progress (stderr is a terminal)', () => {
    const d = folder('progress', { 'a.yaml': stringify(configMap('a')) + '---\n' + stringify(configMap('b')) });
    const { io, progress } = lines();
    expect(runValidate(d, {}, io)).toBe(0);
    expect(progress[0]).toMatch(/loading the schemas/);
    expect(progress.slice(1)).toEqual([`validate ${d}: object 1/2 (a.yaml)`, `validate ${d}: object 2/2 (a.yaml)`, '']);
  });

  it('prints nothing but the result otherwise', () => {
    const d = folder('quiet', { 'a.yaml': stringify(configMap('a')) });
    const out: string[] = [];
    const err: string[] = [];
    expect(runValidate(d, {}, { out: (l) => out.push(l), err: (l) => err.push(l) })).toBe(0);
    expect(out).toHaveLength(1);
    expect(err).toEqual([]);
  });
});
