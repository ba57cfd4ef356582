/**
 * `klutch-kit init` (runtime/cli/init.ts): the files it writes are README.md's "Start a project" blocks
 * byte for byte, in both layouts; it refuses to overwrite, and a bad layout is a usage error.
 * (`npm run test:package` runs the same command from the packed tarball, then installs and synthesizes.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../runtime/cli/errors.js';
import { INIT_LAYOUTS, initFiles, initProject, initVersions, projectName } from '../../../runtime/cli/init.js';
import { main } from '../../../runtime/cli/main.js';
import { readmeInitFiles } from '../../../scripts/_init-blocks.js';

const README = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kk-init-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('klutch-kit init', () => {
  it.each(INIT_LAYOUTS)("writes README's files for the %s layout, byte for byte", (layout) => {
    const dir = join(root, `readme-${layout}`, 'my-topology');
    initProject(dir, layout);
    const shown = readmeInitFiles(README, layout);
    const written = initFiles(layout, 'my-topology').map((f) => f.path);
    expect([...shown.keys()].sort()).toEqual([...written].sort());
    for (const f of written) expect({ file: f, content: readFileSync(join(dir, f), 'utf8') }).toEqual({ file: f, content: shown.get(f) });
  });

  it('finds a README block that differs (the comparison can fail)', () => {
    const changed = README.replace('"private": true,', '"private": false,');
    expect(changed).not.toBe(README);
    expect(readmeInitFiles(changed, 'esm').get('package.json')).not.toBe(initFiles('esm', 'my-topology')[0]!.content);
  });

  it('depends on klutch-kit, its cdk8s peers, TypeScript and @types/node at the ranges klutch-kit declares', () => {
    const own = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
      version: string;
      peerDependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const layout of INIT_LAYOUTS) {
      const pkg = JSON.parse(initFiles(layout, 'p').find((f) => f.path === 'package.json')!.content) as {
        dependencies: Record<string, string>;
        devDependencies: Record<string, string>;
      };
      expect(pkg.dependencies).toEqual({
        cdk8s: own.peerDependencies['cdk8s'],
        'cdk8s-plus-28': own.peerDependencies['cdk8s-plus-28'],
        constructs: own.peerDependencies['constructs'],
        'klutch-kit': `^${own.version}`,
      });
      expect(pkg.devDependencies).toMatchObject({ typescript: own.devDependencies['typescript'], '@types/node': own.devDependencies['@types/node'] });
    }
    expect(() => initVersions({ name: 'klutch-kit', version: '1.0.0', peerDependencies: {}, devDependencies: {} })).toThrow(
      `init: klutch-kit's package.json has no peerDependencies["cdk8s"]`,
    );
  });

  it('names the package after the folder', () => {
    expect(projectName('/x/My Topology!')).toBe('my-topology');
    expect(projectName('/x/__')).toBe('klutch-topology');
  });

  it('refuses to overwrite a file, naming it, with exit code 2', async () => {
    const dir = join(root, 'taken');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.ts'), '// mine\n');
    expect(() => initProject(dir, 'esm')).toThrow(UsageError);
    expect(() => initProject(dir, 'esm')).toThrow(`${join(dir, 'main.ts')} already exist(s)`);
    expect(readFileSync(join(dir, 'main.ts'), 'utf8')).toBe('// mine\n');
    let err = '';
    const before = process.exitCode;
    await main(['node', 'klutch-kit', 'init', dir], { write: (s: string) => (err += s) });
    expect(process.exitCode).toBe(2);
    expect(err).toContain('main.ts already exist(s)');
    await main(['node', 'klutch-kit', 'init', join(root, 'other'), '--layout', 'umd'], { write: (s: string) => (err += s) });
    expect(process.exitCode).toBe(2);
    expect(err).toContain("argument 'umd' is invalid. Allowed choices are esm, cjs");
    process.exitCode = before;
  });
});
