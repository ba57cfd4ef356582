/**
 * `klutch-kit init` (runtime/cli/init.ts): the files it writes are README.md's "Start a project" blocks
 * byte for byte, in every layout (esm, cjs, `--pulumi`); it refuses to overwrite, and a bad layout or
 * `--pulumi` with `--layout` is a usage error. (`npm run test:package` runs the same command from the packed
 * tarball, then installs and synthesizes, or type-checks and previews the Pulumi project.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../runtime/cli/errors.js';
import { CDK8S_LAYOUTS, INIT_LAYOUTS, initFiles, initProject, initVersions, projectName } from '../../../runtime/cli/init.js';
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
    for (const layout of CDK8S_LAYOUTS) {
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

  it('--pulumi: a Pulumi project on klutch-kit, its cdk8s peers and the Pulumi SDKs at the ranges klutch-kit declares', () => {
    const own = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
      version: string;
      peerDependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const files = new Map(initFiles('pulumi', 'my-stack').map((f) => [f.path, f.content]));
    expect([...files.keys()]).toEqual(['Pulumi.yaml', 'package.json', 'tsconfig.json', 'index.ts']);
    const pkg = JSON.parse(files.get('package.json')!) as { main: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(pkg.main).toBe('index.ts');
    expect(pkg.dependencies).toEqual({
      '@pulumi/kubernetes': own.peerDependencies['@pulumi/kubernetes'],
      '@pulumi/pulumi': own.peerDependencies['@pulumi/pulumi'],
      cdk8s: own.peerDependencies['cdk8s'],
      'cdk8s-plus-28': own.peerDependencies['cdk8s-plus-28'],
      constructs: own.peerDependencies['constructs'],
      'klutch-kit': `^${own.version}`,
    });
    expect(pkg.devDependencies).toEqual({
      '@types/node': own.devDependencies['@types/node'],
      'ts-node': own.devDependencies['ts-node'],
      typescript: own.devDependencies['typescript'],
    });
    // the project is named after the folder; the default kubernetes provider (the kubectl context) is off
    expect(files.get('Pulumi.yaml')!.split('\n')[0]).toBe('name: my-stack');
    expect(files.get('Pulumi.yaml')).toContain('pulumi:disable-default-providers:\n    value:\n      - kubernetes\n');
    // index.ts composes the topology with klutch-kit/stacks' Topology and reads the config keys its comment names
    const index = files.get('index.ts')!;
    expect(index).toContain("from 'klutch-kit/stacks'");
    expect(index).toContain("new Topology('klutch'");
    for (const key of ['oidc', 'dexConnectors', 'images', 'manifests', 'skipAwait']) expect(index).toMatch(new RegExp(`cfg\\.get(Object)?\\('${key}'\\)`));
    expect(index).toContain('cfg.requireSecret(`kubeconfig-${c.name}`)');
    const { ['@pulumi/kubernetes']: _gone, ...noKubernetes } = own.peerDependencies;
    expect(() => initVersions({ name: 'klutch-kit', version: '1.0.0', peerDependencies: noKubernetes, devDependencies: own.devDependencies })).toThrow(
      `init: klutch-kit's package.json has no peerDependencies["@pulumi/kubernetes"]`,
    );
  });

  it('--pulumi refuses to overwrite a Pulumi project, and refuses --layout beside it, naming both', async () => {
    const dir = join(root, 'pulumi-taken');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'Pulumi.yaml'), 'name: mine\n');
    let err = '';
    const before = process.exitCode;
    await main(['node', 'klutch-kit', 'init', dir, '--pulumi'], { write: (s: string) => (err += s) });
    expect(process.exitCode).toBe(2);
    expect(err).toContain(`${join(dir, 'Pulumi.yaml')} already exist(s)`);
    expect(readFileSync(join(dir, 'Pulumi.yaml'), 'utf8')).toBe('name: mine\n');
    expect(existsSync(join(dir, 'index.ts'))).toBe(false);
    err = '';
    process.exitCode = undefined;
    const fresh = join(root, 'pulumi-and-layout');
    await main(['node', 'klutch-kit', 'init', fresh, '--pulumi', '--layout', 'cjs'], { write: (s: string) => (err += s) });
    expect(process.exitCode).toBe(2);
    expect(err).toContain('init: --pulumi and --layout cjs exclude each other');
    expect(existsSync(fresh)).toBe(false);
    // --layout's default is no conflict
    process.exitCode = undefined;
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((s: string) => out.push(s) > 0) as typeof process.stdout.write;
    try {
      await main(['node', 'klutch-kit', 'init', fresh, '--pulumi'], { write: (s: string) => (err += s) });
    } finally {
      process.stdout.write = write;
    }
    expect(process.exitCode ?? 0).toBe(0);
    expect(out.join('')).toContain('(pulumi layout)');
    expect(readFileSync(join(fresh, 'index.ts'), 'utf8')).toBe(initFiles('pulumi', 'pulumi-and-layout').find((f) => f.path === 'index.ts')!.content);
    process.exitCode = before;
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
