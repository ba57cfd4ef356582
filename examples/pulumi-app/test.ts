// Runs index.ts under Pulumi's mocks (no engine, no cluster) and checks what it registers:
// `npx ts-node test.ts` (CommonJS, as `pulumi up` would load the program).
import * as assert from 'node:assert/strict';
import * as pulumi from '@pulumi/pulumi';

interface Registered {
  type: string;
  name: string;
  inputs: Record<string, any>;
}
const registered: Registered[] = [];
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n';

async function main(): Promise<void> {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push({ type: args.type, name: args.name, inputs: args.inputs });
        return { id: `${args.name}-id`, state: { ...args.inputs } };
      },
      call: (args) => ({ ...args.inputs }),
    },
    'klutch-kit-pulumi-example',
    'dev',
    false,
  );
  const project = 'klutch-kit-pulumi-example';
  pulumi.runtime.setAllConfig(
    {
      [`${project}:kubeconfig`]: KUBECONFIG,
      [`${project}:oidcClientSecret`]: 'a-client-secret-of-some-length',
      [`${project}:cookieSigningKey`]: Buffer.alloc(32, 7).toString('base64'),
    },
    [`${project}:kubeconfig`, `${project}:oidcClientSecret`, `${project}:cookieSigningKey`],
  );
  const program = await import('./index'); // compiled to require() (CommonJS), after the mocks are set
  const url = await new Promise<string>((resolve) => program.backendUrl.apply(resolve));
  assert.equal(url, 'https://bind.example.com');
  for (let i = 0; i < 100 && !registered.some((r) => r.name === 'control-plane-objects'); i++) await new Promise((r) => setTimeout(r, 20));

  assert.ok(
    registered.some((r) => r.type === 'klutch-kit:stacks:ControlPlane'),
    'the ControlPlane component',
  );
  const objs = registered
    .filter((r) => r.type.startsWith('kubernetes:yaml/v2:ConfigGroup'))
    .flatMap((r) => (r.inputs['objs'] ?? []) as Array<Record<string, any>>);
  const has = (kind: string, name: string) => objs.some((o) => o.kind === kind && o.metadata?.name === name);
  for (const [kind, name] of [
    ['CompositeResourceDefinition', 'xclickhouseinstances.analytics.example.com'],
    ['Composition', 'k8s-clickhouse'],
    ['Composition', 'vm-clickhouse'],
    ['APIServiceExportTemplate', 'clickhouseinstances'],
    ['ClusterRole', 'klutch-binder-exports-clickhouseinstances.analytics.example.com'],
    ['ProviderConfig', 'clickhouse-service-broker'],
  ]) {
    assert.ok(has(kind, name), `${kind} ${name} is deployed (have ${objs.length} objects)`);
  }
  console.log(`pulumi mocks: ${registered.length} resources, ${objs.length} objects in ConfigGroups, ClickHouse deployed`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
