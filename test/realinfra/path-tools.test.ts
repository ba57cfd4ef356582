// A kubectl or Pulumi CLI on PATH used instead of a build (runtime/realinfra/path-tools.ts): the version check against
// the pinned release, the lines printed, the switch KLUTCH_KIT_USE_PATH_TOOLS, and that only what is not taken from
// PATH is built (a go that does not exist proves no build is tried).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { kubeRelease, pathKubectl, planComponent, resolveKubectl } from '../../runtime/realinfra/build.js';
import { KUBECTL_TOOL, type ToolLookup, findPathPulumi, findPathTool, pathToolsEnabled } from '../../runtime/realinfra/path-tools.js';
import { ensurePulumiBinaries, planPulumiComponent } from '../../runtime/realinfra/pulumi-build.js';

const tmp: string[] = [];
afterEach(() => {
  for (const d of tmp.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A machine whose PATH holds `tools` (command → path, version output) and whose executable files are `files`. */
function machine(tools: Record<string, { path: string; out?: string }>, files: readonly string[] = []): ToolLookup & { runs: string[] } {
  const runs: string[] = [];
  return {
    runs,
    which: (c) => tools[c]?.path,
    executable: (f) => files.includes(f) || Object.values(tools).some((t) => t.path === f),
    run: (b, args) => {
      runs.push([b, ...args].join(' '));
      return Object.values(tools).find((t) => t.path === b)?.out;
    },
  };
}
const kubectlOut = (v: string) => JSON.stringify({ clientVersion: { major: '1', gitVersion: v } });

describe('tools on PATH', () => {
  it('KLUTCH_KIT_USE_PATH_TOOLS: on unless 0; another value is an error naming it', () => {
    expect(pathToolsEnabled({})).toBe(true);
    expect(pathToolsEnabled({ KLUTCH_KIT_USE_PATH_TOOLS: '1' })).toBe(true);
    expect(pathToolsEnabled({ KLUTCH_KIT_USE_PATH_TOOLS: '0' })).toBe(false);
    expect(() => pathToolsEnabled({ KLUTCH_KIT_USE_PATH_TOOLS: 'off' })).toThrow(
      'KLUTCH_KIT_USE_PATH_TOOLS=off is neither 1 nor 0: set 1 (or leave it unset) to use a compatible kubectl or pulumi on PATH, 0 to always build the pinned releases',
    );
  });

  it('kubectl: uses one within one minor release of the clusters’, says so, and asks its client version only', () => {
    for (const v of ['v1.34.2', 'v1.35.0', 'v1.36.1']) {
      const m = machine({ kubectl: { path: '/usr/bin/kubectl', out: kubectlOut(v) } });
      const lines: string[] = [];
      expect(findPathTool(KUBECTL_TOOL, 'v1.35.8', m, (l) => lines.push(l))).toEqual({ path: '/usr/bin/kubectl', version: v });
      expect(lines).toEqual([
        `kubectl: using /usr/bin/kubectl (${v}; compatible with the pinned v1.35.8: 1.34–1.36; KLUTCH_KIT_USE_PATH_TOOLS=0 builds the pinned release instead)`,
      ]);
      expect(m.runs).toEqual(['/usr/bin/kubectl version --client -o json']);
    }
  });

  it('kubectl: one of another minor or major release is reported with its version and ignored', () => {
    const lines: string[] = [];
    for (const v of ['v1.32.4-dispatcher', 'v1.37.0', 'v2.35.0']) {
      expect(
        findPathTool(KUBECTL_TOOL, 'v1.35.8', machine({ kubectl: { path: '/usr/bin/kubectl', out: kubectlOut(v) } }), (l) => lines.push(l)),
      ).toBeUndefined();
    }
    expect(lines[0]).toBe(
      "kubectl: /usr/bin/kubectl is v1.32.4-dispatcher, not within one minor release of the clusters' v1.35.8 (compatible: 1.34–1.36); ignored, building kubectl v1.35.8 (KLUTCH_KIT_USE_PATH_TOOLS=0 always builds it)",
    );
    expect(lines[1]).toMatch(/^kubectl: \/usr\/bin\/kubectl is v1\.37\.0, not within one minor release/);
    expect(lines[2]).toMatch(/^kubectl: \/usr\/bin\/kubectl is v2\.35\.0, not within one minor release/);
  });

  it('kubectl: none on PATH, or one that does not tell its version, is built', () => {
    const lines: string[] = [];
    expect(findPathTool(KUBECTL_TOOL, 'v1.35.8', machine({}), (l) => lines.push(l))).toBeUndefined();
    expect(findPathTool(KUBECTL_TOOL, 'v1.35.8', machine({ kubectl: { path: '/opt/kubectl' } }), (l) => lines.push(l))).toBeUndefined();
    expect(lines).toEqual([
      'kubectl: none on PATH; building kubectl v1.35.8 (KLUTCH_KIT_USE_PATH_TOOLS=0 always builds it)',
      'kubectl: /opt/kubectl did not tell its version (kubectl version --client -o json); ignored, building kubectl v1.35.8 (KLUTCH_KIT_USE_PATH_TOOLS=0 always builds it)',
    ]);
  });

  it('pulumi: uses one of the pinned major release at the pinned minor release or later, with its language host, in a bin/ folder', () => {
    const home = '/home/u/.pulumi/bin';
    const ok = machine({ pulumi: { path: `${home}/pulumi`, out: 'v3.250.1\n' } }, [`${home}/pulumi-language-nodejs`]);
    const lines: string[] = [];
    expect(findPathPulumi('v3.248.0', ok, (l) => lines.push(l))).toEqual({
      path: `${home}/pulumi`,
      version: 'v3.250.1',
      root: '/home/u/.pulumi',
      languageNodejs: `${home}/pulumi-language-nodejs`,
    });
    expect(lines).toEqual([
      `pulumi: using ${home}/pulumi (v3.250.1; compatible with the pinned v3.248.0: >= 3.248, < 4; KLUTCH_KIT_USE_PATH_TOOLS=0 builds the pinned release instead)`,
    ]);
    const ignored = (m: ToolLookup) => {
      const l: string[] = [];
      expect(findPathPulumi('v3.248.0', m, (x) => l.push(x))).toBeUndefined();
      return l[0];
    };
    expect(ignored(machine({ pulumi: { path: `${home}/pulumi`, out: 'v3.200.0\n' } }, [`${home}/pulumi-language-nodejs`]))).toBe(
      `pulumi: ${home}/pulumi is v3.200.0, older than 3.248 or not 3.x (compatible: >= 3.248, < 4); ignored, building pulumi v3.248.0 (KLUTCH_KIT_USE_PATH_TOOLS=0 always builds it)`,
    );
    expect(ignored(machine({ pulumi: { path: `${home}/pulumi`, out: 'v4.0.0\n' } }, [`${home}/pulumi-language-nodejs`]))).toMatch(
      /is v4\.0\.0, older than 3\.248 or not 3\.x/,
    );
    expect(ignored(machine({ pulumi: { path: `${home}/pulumi`, out: 'v3.250.1\n' } }))).toMatch(
      /is v3\.250\.1, without its Node\.js language host beside it \(\/home\/u\/\.pulumi\/bin\/pulumi-language-nodejs\)/,
    );
    expect(ignored(machine({ pulumi: { path: '/opt/pulumi/pulumi', out: 'v3.250.1\n' } }, ['/opt/pulumi/pulumi-language-nodejs']))).toMatch(
      /is v3\.250\.1, not in a bin\/ folder/,
    );
  });

  it('kubectl: resolveKubectl takes a compatible one from PATH without building; with the switch off it is the pinned build', async () => {
    const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'path-tools-'));
    tmp.push(cacheRoot);
    const pinned = kubeRelease();
    const m = /^v(\d+)\.(\d+)\./.exec(pinned)!;
    const onPath = machine({ kubectl: { path: '/usr/local/bin/kubectl', out: kubectlOut(`v${m[1]}.${Number(m[2]) - 1}.3`) } });
    // pathTools: true, not the environment's KLUTCH_KIT_USE_PATH_TOOLS (.ci/run sets 0)
    const noGo = { cacheRoot, goBinary: '/nonexistent/go', lookup: onPath, pathTools: true };
    expect(await resolveKubectl(noGo)).toEqual({ path: '/usr/local/bin/kubectl', version: `v${m[1]}.${Number(m[2]) - 1}.3`, from: 'path' });
    expect(pathKubectl({ ...noGo, pathTools: false })).toBeUndefined();
    await expect(resolveKubectl({ ...noGo, pathTools: false })).rejects.toThrow(/the go command "\/nonexistent\/go" was not found/);
    // the pinned build, once cached, without go
    const plan = planComponent('kubectl', { cacheRoot });
    fs.mkdirSync(plan.dir, { recursive: true });
    fs.writeFileSync(plan.binary, '');
    fs.writeFileSync(path.join(plan.dir, '.complete'), '');
    expect(await resolveKubectl({ ...noGo, pathTools: false })).toEqual({ path: plan.binary, version: pinned, from: 'built' });
  });

  it('pulumi: ensurePulumiBinaries builds only the provider when the CLI comes from PATH', async () => {
    const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'path-tools-'));
    tmp.push(cacheRoot);
    const k8s = planPulumiComponent('pulumi-resource-kubernetes', { cacheRoot });
    fs.mkdirSync(k8s.binDir, { recursive: true });
    fs.writeFileSync(path.join(k8s.binDir, 'pulumi-resource-kubernetes'), '');
    fs.writeFileSync(path.join(k8s.dir, '.complete'), '');
    const cliVersion = planPulumiComponent('pulumi-cli', { cacheRoot }).version;
    const bin = '/home/u/.pulumi/bin';
    const onPath = machine({ pulumi: { path: `${bin}/pulumi`, out: `${cliVersion}\n` } }, [`${bin}/pulumi-language-nodejs`]);
    const lines: string[] = [];
    const bins = await ensurePulumiBinaries({ cacheRoot, goBinary: '/nonexistent/go', lookup: onPath, pathTools: true, log: (l) => lines.push(l) });
    expect(bins).toEqual({
      pulumiRoot: '/home/u/.pulumi',
      pulumi: `${bin}/pulumi`,
      languageNodejs: `${bin}/pulumi-language-nodejs`,
      kubernetesProvider: path.join(k8s.binDir, 'pulumi-resource-kubernetes'),
      pathDirs: [bin, k8s.binDir],
      cliVersion,
      kubernetesVersion: k8s.version,
      cliFrom: 'path',
    });
    expect(lines).toEqual([expect.stringMatching(/^pulumi: using \/home\/u\/\.pulumi\/bin\/pulumi /)]);
    // the switch off: the CLI is built (here: no go, so the build is what fails)
    await expect(ensurePulumiBinaries({ cacheRoot, goBinary: '/nonexistent/go', lookup: onPath, pathTools: false })).rejects.toThrow(
      /pulumi-cli failed \(the go command "\/nonexistent\/go" was not found/,
    );
  });
});
