// `npx cdk8s import` (the cdk8s CLI reading cdk8s.yaml) regenerates imports/ exactly as
// `npm run import` does, offline and without the upgrade-check stack trace.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CDK8S_ENV, CDK8S_YAML_IMPORTS, IMPORT_UNITS, UNITS_DIR } from '../../scripts/import-units.js';

jest.setTimeout(120_000);

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'cdk8s-yaml-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('cdk8s.yaml', () => {
  const config = parse(readFileSync(join(root, 'cdk8s.yaml'), 'utf8')) as { importDirectory: string; language: string; imports: string[] };

  it('names the import units of npm run import (all but the one with a class prefix), whose inputs are committed', () => {
    expect(config).toMatchObject({ importDirectory: 'imports', language: 'typescript' });
    expect(config.imports).toEqual(CDK8S_YAML_IMPORTS);
    expect(IMPORT_UNITS.filter((u) => u.classPrefix).map((u) => u.name)).toEqual(['provider-kubernetes']);
    for (const u of IMPORT_UNITS) expect(existsSync(join(root, UNITS_DIR, `${u.name}.yaml`))).toBe(true);
  });

  it('a plain `cdk8s import` regenerates the committed imports/*.ts, offline, with no stack trace', () => {
    // a copy of the project where imports/ is empty but for the (linked) CRD inputs
    copyFileSync(join(root, 'cdk8s.yaml'), join(work, 'cdk8s.yaml'));
    mkdirSync(join(work, 'imports'));
    symlinkSync(join(root, 'imports', 'crds'), join(work, 'imports', 'crds'));
    const r = spawnSync(process.execPath, [join(root, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s'), 'import'], {
      cwd: work,
      // no ~/.cdk8s-cli.version cache to fall back on
      env: { ...process.env, ...CDK8S_ENV, HOME: work },
      encoding: 'utf8',
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.not.stringMatching(/Error|^\s+at /m) });
    const made = readdirSync(join(work, 'imports')).filter((f) => f.endsWith('.ts')).sort();
    const expected = readdirSync(join(root, 'imports')).filter((f) => f.endsWith('.ts') && !f.startsWith('provider-kubernetes-')).sort();
    expect(made).toEqual(expected);
    for (const f of made) expect(readFileSync(join(work, 'imports', f), 'utf8')).toBe(readFileSync(join(root, 'imports', f), 'utf8'));
  });
});
