/**
 * Under `pulumi.runtime.setMocks`: an app cluster with `access.kind: kind` gets a kind dynamic resource, and its
 * kubernetes provider takes the (secret) kubeconfig from that resource — a real dependency in the graph. The kind
 * prerequisites check runs for real against stand-in `docker`/`kind` scripts on PATH (this machine has no Docker
 * daemon); the mocks never run the kind CLI.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as pulumi from '@pulumi/pulumi';
import type * as StacksModule from '../../stacks/index.js';

const SECRET_SIG = '4dabf18193072939515e22adb298388d';
const KUBECONFIG = (server: string) =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`;

interface Registration {
  type: string;
  name: string;
  urn: string;
  dependencies: string[];
  raw: Record<string, unknown>;
}
const registrations: Registration[] = [];
let outputs: StacksModule.StackOutputs;
const savedPath = process.env['PATH'];
const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'kind-graph-'));

function byName(name: string): Registration {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource named ${name}; have ${registrations.map((x) => x.name).join(', ')}`);
  return r;
}

beforeAll(async () => {
  fs.writeFileSync(path.join(bin, 'docker'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'kind'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  process.env['PATH'] = `${bin}${path.delimiter}${savedPath}`;
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({
        id: `${args.name}-id`,
        state: args.type === 'pulumi-nodejs:dynamic/kind:Cluster' ? { ...args.inputs, kubeconfig: KUBECONFIG('https://127.0.0.1:40001') } : { ...args.inputs },
      }),
      call: (args) => ({ ...args.inputs }),
    },
    'klutch-kit',
    'unit',
    false,
  );
  const monitor = (pulumi.runtime as unknown as { getMonitor(): any }).getMonitor();
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, cb: any) => {
    const raw = (req.getObject()?.toJavaScript() ?? {}) as Record<string, unknown>;
    original(req, (err: unknown, resp: any) => {
      if (!err) registrations.push({ type: req.getType(), name: req.getName(), urn: resp.getUrn(), dependencies: req.getDependenciesList(), raw });
      cb(err, resp);
    });
  };
  pulumi.runtime.setAllConfig(
    {
      'klutch-kit:controlPlane': JSON.stringify({ name: 'cp' }),
      'klutch-kit:appClusters': JSON.stringify([{ name: 'app-1', access: { kind: 'kind', nodeImage: 'kindest/node:v1.33.1' } }]),
      'klutch-kit:backend': JSON.stringify({ url: 'https://bind.example.com' }),
      'klutch-kit:oidc': JSON.stringify({ issuerUrl: 'https://issuer.example.com' }),
      'klutch-kit:skipAwait': 'true',
      'klutch-kit:manifests': 'runtime',
      'klutch-kit:kubeconfig-cp': KUBECONFIG('https://127.0.0.1:6441'),
      'klutch-kit:oidcClientSecret': 'a-client-secret-of-some-length',
      'klutch-kit:cookieSigningKey': Buffer.alloc(32, 7).toString('base64'),
    },
    ['klutch-kit:kubeconfig-cp', 'klutch-kit:oidcClientSecret', 'klutch-kit:cookieSigningKey'],
  );
  const stacks = await import('../../stacks/index.js');
  outputs = await stacks.klutchProgram();
  await new Promise((r) => pulumi.all([outputs.kubeconfigs, outputs.bindCommands]).apply(r));
  for (let i = 0; i < 100 && !registrations.some((r) => r.name === 'app-1-objects'); i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
}, 120_000);

afterAll(() => {
  process.env['PATH'] = savedPath;
  fs.rmSync(bin, { recursive: true, force: true });
});

describe('kind cluster', () => {
  it('registers a kind dynamic resource with the kind CLI argv', () => {
    const kind = byName('kind-app-1');
    expect(kind.type).toBe('pulumi-nodejs:dynamic/kind:Cluster');
    expect(kind.raw['clusterName']).toBe('app-1');
    expect((kind.raw['commands'] as Record<string, unknown>)['create']).toEqual([
      'create',
      'cluster',
      '--name',
      'app-1',
      '--kubeconfig',
      '<kubeconfig>',
      '--image',
      'kindest/node:v1.33.1',
    ]);
    expect((kind.raw['commands'] as Record<string, unknown>)['delete']).toEqual(['delete', 'cluster', '--name', 'app-1']);
    expect(typeof kind.raw['__provider']).toBe('string');
  });

  it("feeds the kind resource's kubeconfig, as a secret, into the cluster's provider", async () => {
    const kind = byName('kind-app-1');
    const provider = registrations.find((r) => r.type === 'pulumi:providers:kubernetes' && r.name === 'app-1')!;
    expect(provider.dependencies).toContain(kind.urn);
    expect(byName('app-1-objects').dependencies.length).toBeGreaterThan(0);
    const kc = provider.raw['kubeconfig'] as Record<string, unknown>;
    expect(kc[SECRET_SIG]).toBeDefined();
    expect(JSON.stringify(kc)).toContain('127.0.0.1:40001');
    // The control plane (kubeconfig access) does not depend on it.
    const cpProvider = registrations.find((r) => r.type === 'pulumi:providers:kubernetes' && r.name === 'cp')!;
    expect(cpProvider.dependencies).not.toContain(kind.urn);
    expect(await pulumi.isSecret(outputs.kubeconfigs)).toBe(true);
    const k = await new Promise<Record<string, string>>((r) => outputs.kubeconfigs.apply(r));
    expect(k['app-1']).toContain('127.0.0.1:40001');
  });
});
