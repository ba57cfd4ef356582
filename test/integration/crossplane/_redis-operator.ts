/**
 * **Redis operator stand-in** for the operator-profile example of docs/dataservice.md: no Redis
 * operator runs here, so this small controller plays one at operator level only. It brings the
 * operator's CRD (`redisclusters.cache.example.com`, a structural schema of exactly the layout the
 * example's `OperatorProfile` writes, so a field the Composition puts elsewhere is refused or pruned by
 * the API server) and reconciles every `RedisCluster`: it writes `status.phase: Provisioning` and
 * `readyNodes: 0` until the test says the nodes are up (`nodesUp`), then `phase: Ready` and
 * `readyNodes: spec.nodes`, with `observedGeneration`. It starts no Redis server and touches nothing
 * but the status of its own objects; claims, XRs and Objects are left to Crossplane and provider-kubernetes.
 */
import type { Api, Obj } from './_support.js';

export const REDIS_OPERATOR = { group: 'cache.example.com', version: 'v1', kind: 'RedisCluster', plural: 'redisclusters' } as const;
export const REDIS_API_VERSION = `${REDIS_OPERATOR.group}/${REDIS_OPERATOR.version}`;

/** The stand-in operator's CRD and the RBAC that lets provider-kubernetes manage its objects. */
export function redisOperatorManifests(): Obj[] {
  const { group, version, kind, plural } = REDIS_OPERATOR;
  const str = { type: 'string' };
  const int = { type: 'integer' };
  return [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
        versions: [
          {
            name: version,
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    required: ['redisVersion', 'nodes'],
                    properties: {
                      redisVersion: int,
                      nodes: { type: 'integer', minimum: 1 },
                      maxMemory: str,
                      persistence: { type: 'object', properties: { enabled: { type: 'boolean' }, size: str } },
                      config: { type: 'object', properties: { maxmemoryPolicy: str, databases: int } },
                    },
                  },
                  status: {
                    type: 'object',
                    properties: { phase: { type: 'string', enum: ['Provisioning', 'Ready'] }, readyNodes: int, observedGeneration: int },
                  },
                },
              },
            },
          },
        ],
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'test-provider-kubernetes-redis-operator' },
      rules: [{ apiGroups: [group], resources: [plural], verbs: ['*'] }],
    } as Obj,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'test-provider-kubernetes-redis-operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-provider-kubernetes-redis-operator' },
      subjects: [{ kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: 'crossplane-system' }],
    } as Obj,
  ];
}

/** The Redis operator stand-in's reconcile loop (see the file comment). */
export class RedisOperatorStandIn {
  private readonly up = new Set<string>();
  private running = false;
  private loop?: Promise<void>;
  /** Status writes done (one per change), for the test's assertions. */
  public writes = 0;
  /** The last reconcile error, if any (the loop keeps going, as a controller would). */
  public lastError?: string;

  constructor(
    private readonly api: Api,
    private readonly everyMs = 250,
  ) {}

  start(): void {
    if (this.running) throw new Error('the Redis operator stand-in is already running');
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          await this.reconcileAll();
          this.lastError = undefined;
        } catch (e) {
          this.lastError = e instanceof Error ? e.message : String(e);
        }
        await new Promise((r) => setTimeout(r, this.everyMs));
      }
    })();
  }

  /** Stops the loop and waits for the reconcile in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** The nodes of `namespace/name` are up: from now on the stand-in reports the cluster Ready. */
  nodesUp(name: string, namespace: string): void {
    this.up.add(`${namespace}/${name}`);
  }

  private async reconcileAll(): Promise<void> {
    for (const o of await this.api.list(REDIS_API_VERSION, REDIS_OPERATOR.kind)) {
      if (o.metadata!.deletionTimestamp) continue;
      const up = this.up.has(`${o.metadata!.namespace}/${o.metadata!.name}`);
      const want = { phase: up ? 'Ready' : 'Provisioning', readyNodes: up ? (o.spec!.nodes as number) : 0, observedGeneration: o.metadata!.generation };
      const have = o.status ?? {};
      if (have.phase === want.phase && have.readyNodes === want.readyNodes && have.observedGeneration === want.observedGeneration) continue;
      await this.api.patchStatus(REDIS_API_VERSION, REDIS_OPERATOR.kind, o.metadata!.name!, o.metadata!.namespace, want);
      this.writes++;
    }
  }
}
