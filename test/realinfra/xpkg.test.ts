// The package layer the Crossplane harness pushes: package.yaml from a package folder, and the tar around it.
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { packageYamlFromDir, tarFiles } from '../../runtime/realinfra/xpkg.js';

const temps: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xpkg-'));
  temps.push(d);
  return d;
}
afterEach(() => {
  for (const d of temps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('packageYamlFromDir', () => {
  it('puts crossplane.yaml first, then every YAML file below the folder in path order', () => {
    const d = tempDir();
    fs.mkdirSync(path.join(d, 'crds'));
    fs.writeFileSync(path.join(d, 'crds', 'b.yaml'), 'kind: B\n');
    fs.writeFileSync(path.join(d, 'crds', 'a.yml'), '---\nkind: A\n');
    fs.writeFileSync(path.join(d, 'crossplane.yaml'), 'kind: Provider\n');
    fs.writeFileSync(path.join(d, 'README.md'), '# not a manifest\n');
    const docs = parseAllDocuments(packageYamlFromDir(d)).map((x) => (x.toJS() as { kind: string }).kind);
    expect(docs).toEqual(['Provider', 'A', 'B']);
  });

  it('names the folder when it has no crossplane.yaml', () => {
    const d = tempDir();
    expect(() => packageYamlFromDir(d)).toThrow(`realinfra: package source ${d} has no crossplane.yaml`);
  });
});

describe('tarFiles', () => {
  it('writes a tar that the system tar reads back byte for byte', () => {
    const d = tempDir();
    const content = 'apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\n'.repeat(20);
    fs.writeFileSync(path.join(d, 'layer.tar'), tarFiles({ 'package.yaml': content, 'empty.txt': '' }));
    expect(
      execFileSync('tar', ['-tf', path.join(d, 'layer.tar')], { encoding: 'utf8' })
        .trim()
        .split('\n'),
    ).toEqual(['package.yaml', 'empty.txt']);
    execFileSync('tar', ['-xf', path.join(d, 'layer.tar'), '-C', d]);
    expect(fs.readFileSync(path.join(d, 'package.yaml'), 'utf8')).toBe(content);
    expect(fs.statSync(path.join(d, 'empty.txt')).size).toBe(0);
  });

  it('rejects names longer than a ustar header holds', () => {
    expect(() => tarFiles({ [`${'x'.repeat(101)}`]: 'a' })).toThrow(`tar entry name "${'x'.repeat(101)}" is longer than 100 bytes`);
  });
});
