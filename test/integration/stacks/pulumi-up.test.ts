/**
 * A real `pulumi up` of the stack program (stacks/main.ts, ESM TypeScript through tsx) against real
 * kube-apiserver + etcd + kube-controller-manager clusters from the harness, with the Pulumi CLI, klutch-kit's
 * Node.js language host and pulumi-resource-kubernetes built from the Go modules in tools/pulumi/
 * (local file backend, passphrase secrets, no plugin downloads):
 *
 * 1. `up` creates every object of the topology in the right cluster (CRDs before the objects that use them,
 *    Secrets with the config secret values, workload awaits skipped — no kubelet runs pods here);
 * 2. a second `up` changes nothing;
 * 3. `destroy` leaves no object behind.
 *
 * Topology: control plane `cp`, app cluster `app-1` bound by the CLI flow (konnector installed) and app cluster
 * `app-2` bound in control-plane mode (AppClusterBinding + kubeconfig Secret on cp; nothing installed in app-2).
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import type { Stack } from '@pulumi/pulumi/automation/index.js';
import { type RealCluster, startCluster } from '../../../runtime/realinfra/index.js';
import { ensurePulumiBinaries, type PulumiBinaries } from '../../../runtime/realinfra/pulumi-build.js';
import { createLocalStack } from '../../../sandbox/pods.js';
import { parseStackConfig, type RawStackConfig } from '../../../stacks/config.js';
import { defaultManifestSource, type KubeObject, appClusterBinding, STACK_SECRETS } from '../../../stacks/manifests.js';
import { generateStackSecrets } from '../../../stacks/secrets.js';

jest.setTimeout(600_000);

const started = Date.now();
const log = (line: string) => process.stderr.write(`[stacks +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

const clusters: RealCluster[] = [];
let cp: RealCluster;
let app: RealCluster;
let bins: PulumiBinaries;
let tmp: string;
let stack: Stack;
let secrets: Record<string, string>;
const timings: Record<string, number> = {};

const rawConfig: RawStackConfig = {
  controlPlane: { name: 'cp', access: { kind: 'kubeconfig' } },
  appClusters: [
    { name: 'app-1', access: { kind: 'kubeconfig' } },
    { name: 'app-2', access: { kind: 'kubeconfig' }, binding: 'controlPlane' },
  ],
  backend: { url: 'https://bind.klutch.test' },
  dexConnectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock' }],
  skipAwait: true,
  // No Crossplane can run here (no container runtime), so the binding runtime only; see docs/pulumi.md.
  manifests: 'runtime',
};

/** Every object the topology puts into each cluster (computed by the same source the program uses). */
function expectedObjects(): { cp: KubeObject[]; app: KubeObject[] } {
  const config = parseStackConfig(rawConfig);
  const images = { backend: 'ghcr.io/klutch-kit/backend:0.1.0', dex: 'ghcr.io/dexidp/dex:v2.45.1-distroless' };
  const cpObjs = defaultManifestSource.controlPlane({ config, images, hasCookieEncryptionKey: true });
  const appObjs = defaultManifestSource.appCluster({ config, cluster: config.appClusters[0]!, images: { konnector: 'ghcr.io/klutch-kit/konnector:0.1.0' } });
  const secretObjs: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: STACK_SECRETS.oidc.name, namespace: STACK_SECRETS.namespace } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: STACK_SECRETS.cookies.name, namespace: STACK_SECRETS.namespace } },
  ];
  const { binding, secretName } = appClusterBinding(config.appClusters[1]!);
  const bindingObjs: KubeObject[] = [binding, { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName, namespace: binding.metadata.namespace! } }];
  return { cp: [...cpObjs, ...secretObjs, ...bindingObjs], app: appObjs };
}

async function readObject(cluster: RealCluster, o: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<KubernetesObject | undefined> {
  const client = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
  try {
    return await client.read({
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: { name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) },
    });
  } catch (e) {
    const code = (e as { code?: number }).code;
    if (code === 404) return undefined;
    throw e;
  }
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    timings[what] = (Date.now() - t) / 1000;
    log(`${what}: ${timings[what]!.toFixed(1)} s`);
  }
}

beforeAll(async () => {
  bins = await timed('pulumi toolchain (ensurePulumiBinaries)', () => ensurePulumiBinaries({ log }));
  [cp, app] = (await timed('start clusters', () => Promise.all([startCluster({ name: 'pulumi-cp' }), startCluster({ name: 'pulumi-app' })]))) as [
    RealCluster,
    RealCluster,
  ];
  clusters.push(cp, app);

  // A project folder outside the work tree (stack config files and state land here), whose program is the
  // repository's stacks/main.ts (sandbox/pods.ts createLocalStack).
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-pulumi-'));
  stack = await createLocalStack(tmp, bins, 'it', 'klutch-kit integration test');
  secrets = generateStackSecrets();
  const kc = (c: RealCluster) => fs.readFileSync(c.kubeconfigPath, 'utf8');
  await stack.setAllConfig({
    'klutch-kit:controlPlane': { value: JSON.stringify(rawConfig.controlPlane) },
    'klutch-kit:appClusters': { value: JSON.stringify(rawConfig.appClusters) },
    'klutch-kit:backend': { value: JSON.stringify(rawConfig.backend) },
    'klutch-kit:dexConnectors': { value: JSON.stringify(rawConfig.dexConnectors) },
    'klutch-kit:skipAwait': { value: 'true' },
    'klutch-kit:manifests': { value: 'runtime' },
    'klutch-kit:kubeconfig-cp': { value: kc(cp), secret: true },
    'klutch-kit:kubeconfig-app-1': { value: kc(app), secret: true },
    // app-2 is bound in control-plane mode: only its kubeconfig is used (stored in a Secret on cp).
    'klutch-kit:kubeconfig-app-2': { value: kc(app), secret: true },
    'klutch-kit:oidcClientSecret': { value: secrets['oidcClientSecret']!, secret: true },
    'klutch-kit:cookieSigningKey': { value: secrets['cookieSigningKey']!, secret: true },
    'klutch-kit:cookieEncryptionKey': { value: secrets['cookieEncryptionKey']!, secret: true },
  });
}, 3_600_000);

afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  log(`timings: ${JSON.stringify(timings)}`);
});

const output = (line: string) => {
  const l = line.replace(/\s+$/, '');
  if (l) process.stderr.write(`  | ${l}\n`);
};

describe('pulumi up / up / destroy on real API servers', () => {
  it('a bad config value fails the preview with the key and the value, and deploys nothing', async () => {
    await stack.setConfig('klutch-kit:backend', { value: JSON.stringify({ url: 'http://bind.klutch.test' }) });
    let message = '';
    try {
      await stack.preview({ color: 'never' });
    } catch (e) {
      message = e instanceof Error ? e.message : String(e);
    }
    expect(message).toContain('klutch-kit:backend.url: expected an https URL (http is accepted only on loopback), got "http://bind.klutch.test"');
    await stack.setConfig('klutch-kit:backend', { value: JSON.stringify(rawConfig.backend) });
    expect(await readObject(cp, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'klutch-system' } })).toBeUndefined();
  });

  it('up deploys the whole topology into the right clusters', async () => {
    const res = await timed('pulumi up #1', () => stack.up({ onOutput: output, color: 'never' }));
    expect(res.summary.result).toBe('succeeded');
    expect(res.summary.resourceChanges?.['create']).toBeGreaterThan(10);

    // Outputs: backend URL, bind command, kubeconfigs kept secret.
    expect(res.outputs['backendUrl']).toEqual({ value: 'https://bind.klutch.test', secret: false });
    expect(res.outputs['kubeconfigs']?.secret).toBe(true);
    expect((res.outputs['bindCommands']?.value as Record<string, string>)['app-1']).toBe(
      'kubectl bind https://bind.klutch.test/export --kubeconfig <kubeconfig of app-1>',
    );
    // The state file holds no secret in clear text.
    const state = fs
      .readdirSync(path.join(tmp, 'state'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.json'));
    const stateText = state.map((f) => fs.readFileSync(path.join(tmp, 'state', f), 'utf8')).join('\n');
    expect(stateText.length).toBeGreaterThan(0);
    expect(stateText).not.toContain(secrets['cookieSigningKey']);
    expect(stateText).not.toContain(secrets['oidcClientSecret']);
    expect(stateText).not.toContain('BEGIN RSA PRIVATE KEY');

    const want = expectedObjects();
    for (const [cluster, objs] of [
      [cp, want.cp],
      [app, want.app],
    ] as const) {
      for (const o of objs) {
        const live = await readObject(cluster, o);
        expect({ cluster: cluster.name, ref: `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`, found: live !== undefined }).toEqual({
          cluster: cluster.name,
          ref: `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`,
          found: true,
        });
      }
    }
    // Nothing of the control plane landed in the app cluster and vice versa.
    expect(
      await readObject(app, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'klutch-backend', namespace: 'klutch-system' } }),
    ).toBeUndefined();
    const konnector = want.app.find((o) => o.kind === 'Deployment')!;
    expect(await readObject(cp, konnector)).toBeUndefined();

    // The Secrets carry the config secret values.
    const oidc = (await readObject(cp, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: STACK_SECRETS.oidc.name, namespace: STACK_SECRETS.namespace },
    })) as { data: Record<string, string> };
    expect(Buffer.from(oidc.data[STACK_SECRETS.oidc.clientSecretKey]!, 'base64').toString()).toBe(secrets['oidcClientSecret']);
    const kubeconfigSecret = (await readObject(cp, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-2-kubeconfig', namespace: 'klutch-app-clusters' },
    })) as { data: Record<string, string> };
    expect(Buffer.from(kubeconfigSecret.data['kubeconfig']!, 'base64').toString()).toContain(app.server);

    // Workload awaits were skipped (no kubelet here), by annotation on every workload object.
    const backend = await readObject(cp, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'klutch-backend', namespace: 'klutch-system' } });
    expect(backend?.metadata?.annotations?.['pulumi.com/skipAwait']).toBe('true');
  });

  it('a second up changes nothing', async () => {
    const preview = await timed('pulumi preview --expect-no-changes', () => stack.preview({ expectNoChanges: true, color: 'never' }));
    expect(Object.keys(preview.changeSummary).filter((k) => k !== 'same')).toEqual([]);
    const res = await timed('pulumi up #2', () => stack.up({ onOutput: output, color: 'never' }));
    expect(res.summary.result).toBe('succeeded');
    const changes = res.summary.resourceChanges ?? {};
    expect(Object.keys(changes).filter((k) => k !== 'same')).toEqual([]);
    expect(changes['same']).toBeGreaterThan(10);
  });

  it('destroy leaves no object behind', async () => {
    const res = await timed('pulumi destroy', () => stack.destroy({ onOutput: output, color: 'never' }));
    expect(res.summary.result).toBe('succeeded');
    const want = expectedObjects();
    // Namespaced objects go with their namespace; the namespace controller of kube-controller-manager finalises it.
    const deadline = Date.now() + 120_000;
    for (const [cluster, objs] of [
      [cp, want.cp],
      [app, want.app],
    ] as const) {
      for (const o of objs) {
        let live = await readObject(cluster, o);
        while (live && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 500));
          live = await readObject(cluster, o);
        }
        expect({ cluster: cluster.name, ref: `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`, left: live !== undefined }).toEqual({
          cluster: cluster.name,
          ref: `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`,
          left: false,
        });
      }
    }
    const after = await stack.exportStack();
    expect((after.deployment as { resources?: unknown[] }).resources ?? []).toEqual([]);
    await stack.workspace.removeStack('it');
  });
});
