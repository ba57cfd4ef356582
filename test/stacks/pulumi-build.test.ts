/** runtime/realinfra/pulumi-build.ts: cache keys follow the wrapper modules' content; bad pins fail by name. */
import { describe, expect, it } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { planPulumiComponent, pulumiEnv } from '../../runtime/realinfra/pulumi-build.js';

const tools = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'tools');

function copyTools(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-pulumi-plan-'));
  fs.cpSync(path.join(tools, 'pulumi'), path.join(dir, 'pulumi'), { recursive: true });
  return dir;
}

describe('planPulumiComponent', () => {
  it('pins the CLI to the npm SDK version and the provider to its release', () => {
    const cli = planPulumiComponent('pulumi-cli', { cacheRoot: '/cache' });
    expect(cli.version).toBe('v3.248.0');
    expect(cli.outputs).toEqual(['pulumi', 'pulumi-language-nodejs']);
    expect(cli.dir).toBe(`/cache/realinfra/pulumi-cli-${cli.key}`);
    expect(cli.args.join(' ')).toContain('-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.248.0');
    const k8s = planPulumiComponent('pulumi-resource-kubernetes', { cacheRoot: '/cache' });
    expect(k8s.version).toBe('4.25.0');
    expect(k8s.args.join(' ')).toContain('pkg/version.Version=4.25.0');
  });

  it('changes the cache key when a Go source of the wrapper module changes, and only that one', () => {
    const dir = copyTools();
    try {
      const before = {
        cli: planPulumiComponent('pulumi-cli', { toolsDir: dir }).key,
        k8s: planPulumiComponent('pulumi-resource-kubernetes', { toolsDir: dir }).key,
      };
      expect(before.cli).toBe(planPulumiComponent('pulumi-cli').key);
      fs.appendFileSync(path.join(dir, 'pulumi', 'cli', 'pulumi-language-nodejs', 'main.go'), '\n// changed\n');
      expect(planPulumiComponent('pulumi-cli', { toolsDir: dir }).key).not.toBe(before.cli);
      expect(planPulumiComponent('pulumi-resource-kubernetes', { toolsDir: dir }).key).toBe(before.k8s);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a provider pin that is not a known release commit, naming the file and what to do', () => {
    const dir = copyTools();
    try {
      const goMod = path.join(dir, 'pulumi', 'kubernetes', 'go.mod');
      fs.writeFileSync(goMod, fs.readFileSync(goMod, 'utf8').replaceAll('v4.0.0-20260115033456-f47bc2d6f199', 'v4.0.0-20990101000000-000000000000'));
      expect(() => planPulumiComponent('pulumi-resource-kubernetes', { toolsDir: dir })).toThrow(
        /tools\/pulumi\/kubernetes\/go.mod: github.com\/pulumi\/pulumi-kubernetes\/provider\/v4 v4.0.0-20990101000000-000000000000 is not a known release commit/,
      );
      fs.rmSync(path.join(dir, 'pulumi', 'cli', 'go.sum'));
      expect(() => planPulumiComponent('pulumi-cli', { toolsDir: dir })).toThrow(
        /go.sum is missing; the wrapper module must have a committed go.mod and go.sum/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pulumiEnv', () => {
  it('runs the CLI offline: file backend, passphrase, no update check, no plugin downloads, built binaries first on PATH', () => {
    const env = pulumiEnv(
      {
        pulumiRoot: '/c',
        pulumi: '/c/bin/pulumi',
        languageNodejs: '/c/bin/pulumi-language-nodejs',
        kubernetesProvider: '/k/bin/pulumi-resource-kubernetes',
        pathDirs: ['/c/bin', '/k/bin'],
        cliVersion: 'v3.248.0',
        kubernetesVersion: '4.25.0',
        cliFrom: 'built',
      },
      { home: '/h', backendDir: '/s', passphrase: 'p' },
    );
    expect(env['PATH']!.split(path.delimiter).slice(0, 2)).toEqual(['/c/bin', '/k/bin']);
    expect(env).toMatchObject({
      PULUMI_HOME: '/h',
      PULUMI_BACKEND_URL: 'file:///s',
      PULUMI_CONFIG_PASSPHRASE: 'p',
      PULUMI_SKIP_UPDATE_CHECK: 'true',
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    });
  });
});
