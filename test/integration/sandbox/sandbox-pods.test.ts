// @realinfra pulumi (the sandbox runs `pulumi up`; it also needs provider-anynines for the a9s demo: built in the background on a new machine)
/**
 * The full product as docs/sandbox.md documents it, run as written: `npm run sandbox -- <ARGS>` (scripts/sandbox.ts,
 * ARGS below) comes up on the harness's real node with every klutch-kit component a pod — the backend (2 replicas),
 * Dex, a konnector per app cluster, Crossplane core with its function and providers, among them provider-anynines —
 * and the catalogue in the API style asked for (namespaced XRs: no claim CRD on the control plane); it prints a `psql` line
 * for a8s and one for a9s whose credentials each write and read a row, records no klutch-kit host process, and
 * `npm run sandbox -- --down` ends it all: no recorded process, no process of the node's containerd, no PostgreSQL
 * server, no data folder, and the host's node lock is given back (its state restored).
 *
 * topology-pods.test.ts asserts each step of the pods flow (sandbox/pods.ts) in detail; this suite proves the
 * documented command itself, with every flag at once.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { ensureDexBinary, ensureNodeBinaries, ensurePodsBinaries } from '../../../runtime/realinfra/build.js';
import { type HostRecord, nodeLockFile, nodeProcesses } from '../../../runtime/realinfra/host.js';
import { ensurePulumiBinaries } from '../../../runtime/realinfra/pulumi-build.js';
import { PODS_NAMESPACE } from '../../../sandbox/pods.js';
import type { SandboxState } from '../../../sandbox/state.js';
import { alive, psqlLines, sandboxDown, startSandboxCli, untilUp, writeAndRead, type SandboxCli } from './_cli.js';

jest.setTimeout(900_000);

const started = Date.now();
const log = (line: string) => process.stderr.write(`[sandbox ${ARGS.join(' ')} +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

let tmp: string;
let up: SandboxCli | undefined;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-sandbox-pods-'));
  // what the CLI builds on first use; built here so that the run below is the warm one users see after the first
  // (one build at a time: each go build uses every core)
  await ensureNodeBinaries({ log });
  await ensurePodsBinaries({ log });
  await ensureDexBinary({ log });
  await ensurePulumiBinaries({ log });
}, 3_600_000);

afterAll(async () => {
  if (up && up.child.exitCode === null) {
    up.child.kill('SIGTERM');
    await up.exited;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}, 180_000);

interface Pod extends KubeObject {
  status?: { phase?: string; conditions?: Array<{ type: string; status: string }> };
}
/** The host's node lock as written now, or undefined when there is none (or it is being replaced). */
function lockHolder(): HostRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(nodeLockFile(), 'utf8')) as HostRecord;
  } catch {
    return undefined;
  }
}

interface Xrd extends KubeObject {
  spec: { group: string; names: { plural: string }; claimNames?: { plural: string } };
}

/**
 * The flags of the full product: every klutch-kit component a pod, a9s beside a8s, the catalogue as namespaced XRs
 * (no claims; a9s by the namespaced provider-anynines of Klutch's v2 branch).
 */
const ARGS: readonly string[] = ['--pods', '--a9s', '--api-style', 'namespaced'];
const NAMESPACED = ARGS.includes('namespaced');

describe(`the CLI: npm run sandbox -- ${ARGS.join(' ')}, then npm run sandbox -- --down`, () => {
  it('comes up with every klutch-kit component a pod, the CRDs of its API style, and an a8s and an a9s psql line that write and read; --down leaves nothing and gives the node back', async () => {
    const dir = path.join(tmp, 'cli');
    const env = { ...process.env, KLUTCH_SANDBOX_DIR: dir, KUBECONFIG: '' };
    const t0 = Date.now();
    up = startSandboxCli(ARGS, env);
    const cli = up;
    await untilUp(cli, `the CLI sandbox up with ${ARGS.join(' ')}`, 840_000);
    const out = cli.output();
    log(`up with ${ARGS.join(' ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(out).toMatch(/OIDC issuer {7}https:\/\/\S+ \(Dex, a pod\)/);
    expect(out).toContain(`XRDs, API style ${NAMESPACED ? 'namespaced' : 'claims'}`);
    expect(out).toMatch(/a9s: provider-anynines \S+ \(a pod\)/);
    // each printed command's credentials open a session that writes and reads
    const { a8s, a9s } = psqlLines(out);
    expect(await writeAndRead(a8s, 'orders', 'cortado')).toEqual([{ item: 'cortado', u: a8s.user }]);
    if (!a9s) throw new Error(`no a9s psql line in the output:\n${out}`);
    expect(await writeAndRead(a9s, 'orders', 'flat white')).toEqual([{ item: 'flat white', u: a9s.user }]);

    const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as SandboxState;
    // no klutch-kit component is a host process: the sandbox records none besides its clusters
    expect(state.processes).toEqual([]);
    const lock = JSON.parse(fs.readFileSync(nodeLockFile(), 'utf8')) as HostRecord;
    // the node is the control plane's: the cluster its host lock names
    const cpState = state.clusters.find((c) => c.name === lock.cluster);
    if (!cpState) throw new Error(`the node lock names cluster ${lock.cluster}, not one of ${state.clusters.map((c) => c.name).join(', ')}`);
    expect(cpState.name).toBe('sandbox-cp');
    const kc = new KubeConfig();
    kc.loadFromFile(cpState.kubeconfigPath);
    const cp = new KubeClient(kc);
    try {
      const ready = async (ns: string) =>
        (await cp.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).items
          .filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
          // the Deployment of each: its ReplicaSet's name without the template hash
          .map((p) => (p.metadata.ownerReferences?.[0]?.name ?? '').replace(/-[a-z0-9]+$/, ''))
          .sort();
      expect(await ready(PODS_NAMESPACE)).toEqual(['dex', 'klutch-backend', 'klutch-backend']);
      const apps = state.clusters.filter((c) => c !== cpState).map((c) => c.name);
      expect(apps).toHaveLength(2);
      for (const a of apps) expect((await ready(`konnector-${a}`)).length).toBeGreaterThanOrEqual(1);
      // Crossplane core, its RBAC manager, the function and both providers: pods too
      const crossplane = await ready('crossplane-system');
      expect(crossplane.length).toBeGreaterThanOrEqual(5);
      expect(crossplane.some((d) => d.startsWith('provider-anynines-'))).toBe(true);
      // the provider-anynines flavour of the API style: its managed resources namespaced with namespaced XRs
      for (const r of ['serviceinstances', 'servicebindings']) {
        const crd = await cp.request<{ spec: { scope: string } }>(
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${r}.dataservices.anynines.com`,
        );
        expect([r, crd.spec.scope]).toEqual([r, NAMESPACED ? 'Namespaced' : 'Cluster']);
      }
      // the CRDs the XRDs own: with namespaced XRs only the XR CRDs (no XRD offers a claim), with claims also a claim CRD each
      const xrds = (await cp.request<{ items: Xrd[] }>('GET', '/apis/apiextensions.crossplane.io/v2/compositeresourcedefinitions')).items;
      expect(xrds.length).toBeGreaterThan(0);
      expect(xrds.filter((x) => (x.spec.claimNames === undefined) !== NAMESPACED).map((x) => x.metadata.name)).toEqual([]);
      const owned = (await cp.request<{ items: KubeObject[] }>('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).items.filter((c) =>
        c.metadata.ownerReferences?.some((o) => o.kind === 'CompositeResourceDefinition'),
      );
      expect(owned.map((c) => c.metadata.name).sort()).toEqual(
        xrds.flatMap((x) => [x.spec.names, ...(x.spec.claimNames ? [x.spec.claimNames] : [])].map((n) => `${n.plural}.${x.spec.group}`)).sort(),
      );
    } finally {
      cp.close();
    }
    const pids = [state.supervisorPid, ...state.clusters.flatMap((c) => c.pids)];
    expect(pids.filter(alive)).toEqual(pids);
    expect(nodeProcesses(lock).length).toBeGreaterThan(0);

    const down = await sandboxDown(env);
    expect(down.code).toBe(0);
    expect(down.out).toContain('sandbox stopped');
    expect(await cli.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    // the node's pods and containerd are gone, and the host lock with them (the host restored by the node's stop)
    expect(nodeProcesses(lock)).toEqual([]);
    // given back: no lock, or another holder's (a node suite of another run waiting for it takes it at once)
    expect(lockHolder()?.dir).not.toBe(lock.dir);
    expect(fs.existsSync(path.join(dir, 'state.json'))).toBe(false);
    for (const d of [state.a8sDataDir, state.a9sDataDir]) if (d) expect(fs.existsSync(d)).toBe(false);
    expect(state.a9sDataDir).toBeDefined();
    expect(state.clusters.map((c) => c.dir).filter((d) => fs.existsSync(d))).toEqual([]);
  });
});
