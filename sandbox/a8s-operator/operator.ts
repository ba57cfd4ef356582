/**
 * SANDBOX ONLY — a local a8s operator for `npm run sandbox`. No container runtime runs here, so the real a8s
 * PostgreSQL operator and service-binding controller cannot; this operator plays them at operator level, on the
 * runtime's shared informer/work-queue core: every `Postgresql` (postgresql.anynines.com/v1beta3) becomes a real
 * local PostgreSQL server on its own loopback address (127.0.0.2 and up, port 5432), every a8s `ServiceBinding`
 * (servicebindings.anynines.com/v1beta3) a real role and the credentials Secret in the a8s format. Status goes
 * where the a8s operator puts it, so Crossplane's readiness checks and the konnector carry it like in production.
 *
 * Never used by a test of Crossplane behaviour: only by the sandbox and the tests of this operator.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../runtime/core/client.js';
import { Controller } from '../../runtime/core/controller.js';
import { Informer, stripManagedFields } from '../../runtime/core/informer.js';
import { silentLogger } from '../../runtime/core/logger.js';
import { applyManifests, waitForCrdsEstablished } from '../../runtime/realinfra/apply.js';
import { LocalInstances } from './instances.js';
import { assertReachable, findPostgresBinaries, serverUser, type PostgresBinaries, type ServerUser } from './local-postgres.js';
import { PostgresqlReconciler } from './postgresql-reconciler.js';
import { instanceKeyOf, ServiceBindingReconciler } from './servicebinding-reconciler.js';
import { A8S_CRD_FILES, A8S_RESOURCES, type A8sServiceBinding, type Postgresql } from './types.js';

export interface SandboxA8sOperatorOptions {
  /** A client of the cluster the a8s objects live on (the control plane). */
  readonly client: KubeClient;
  /**
   * Folder for the servers' data (one sub-folder per instance; removed when the instance is deleted and by
   * stop()). When this process is root the servers run as `postgres`, who must be able to enter it.
   */
  readonly dataDir: string;
  /** @default the newest /usr/lib/postgresql/<major>/bin */
  readonly binaries?: PostgresBinaries;
  /** @default this process's user, or `postgres` when root */
  readonly user?: ServerUser;
  /** @default 5432, the a8s PostgreSQL port */
  readonly port?: number;
  readonly logger?: Logger;
}

export class SandboxA8sOperator {
  readonly instances: LocalInstances;
  private readonly postgresqls: Informer<Postgresql>;
  private readonly bindings: Informer<A8sServiceBinding>;
  private readonly pgController: Controller;
  private readonly sbController: Controller;
  private readonly log: Logger;

  constructor(private readonly opts: SandboxA8sOperatorOptions) {
    if (!opts.dataDir) throw new Error(`SandboxA8sOperatorOptions.dataDir: ${JSON.stringify(opts.dataDir)} must be a folder path`);
    if (opts.port !== undefined && (!Number.isInteger(opts.port) || opts.port < 1 || opts.port > 65535)) {
      throw new Error(`SandboxA8sOperatorOptions.port: ${opts.port} must be an integer 1-65535`);
    }
    this.log = (opts.logger ?? silentLogger).child({ component: 'sandbox-a8s-operator' });
    const user = opts.user ?? serverUser();
    this.instances = new LocalInstances({
      dataDir: path.resolve(opts.dataDir),
      binaries: opts.binaries ?? findPostgresBinaries(),
      ...(user ? { user } : {}),
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      logger: this.log,
      onUnexpectedExit: (key) => this.pgController.enqueue(key),
    });
    this.postgresqls = new Informer<Postgresql>(opts.client, A8S_RESOURCES.postgresqls, {
      logger: this.log,
      name: 'a8s-postgresqls',
      transform: stripManagedFields,
    });
    this.bindings = new Informer<A8sServiceBinding>(opts.client, A8S_RESOURCES.serviceBindings, {
      logger: this.log,
      name: 'a8s-servicebindings',
      transform: stripManagedFields,
    });
    const pgReconciler = new PostgresqlReconciler({ client: opts.client, informer: this.postgresqls, instances: this.instances });
    const sbReconciler = new ServiceBindingReconciler({
      client: opts.client,
      informer: this.bindings,
      postgresqls: this.postgresqls,
      instances: this.instances,
    });
    this.pgController = new Controller({ name: 'sandbox-a8s-postgresql', logger: this.log, reconciler: pgReconciler });
    this.sbController = new Controller({ name: 'sandbox-a8s-servicebinding', logger: this.log, reconciler: sbReconciler });
    const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
    this.postgresqls.addEventHandler({
      onAdd: (o) => this.pgController.enqueue(key(o)),
      onUpdate: (_o, n) => {
        this.pgController.enqueue(key(n));
        // bindings waiting for this instance
        for (const b of this.bindings.list()) {
          const t = instanceKeyOf(b);
          if ('key' in t && t.key === key(n)) this.sbController.enqueue(key(b));
        }
      },
      onDelete: (o) => this.pgController.enqueue(key(o)),
    });
    this.bindings.addEventHandler({ onAdd: (o) => this.sbController.enqueue(key(o)), onUpdate: (_o, n) => this.sbController.enqueue(key(n)) });
  }

  async start(timeoutMs = 60_000): Promise<void> {
    const dir = path.resolve(this.opts.dataDir);
    fs.mkdirSync(dir, { recursive: true });
    // the servers' own folders are 0700 and theirs; this one only needs to be entered
    fs.chmodSync(dir, 0o711);
    assertReachable(dir, this.opts.user ?? serverUser(), 'SandboxA8sOperatorOptions.dataDir');
    this.instances.warm();
    this.postgresqls.start();
    this.bindings.start();
    await Promise.all([this.postgresqls.waitForSync(timeoutMs), this.bindings.waitForSync(timeoutMs)]);
    this.pgController.start();
    this.sbController.start();
    this.log.info({ dataDir: dir, postgres: this.instances.binaries.major }, 'sandbox a8s operator started');
  }

  /** Stops reconciling; stops every server and removes its data (the sandbox's objects go with its clusters). */
  async stop(): Promise<void> {
    await Promise.all([this.pgController.stop(), this.sbController.stop()]);
    await Promise.all([this.postgresqls.stop(), this.bindings.stop()]);
    await this.instances.destroyAll();
  }
}

const CRD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'imports', 'crds', 'a8s');

/** The vendored a8s CRDs the operator serves (imports/crds/a8s/). */
export function a8sCrds(): KubernetesObject[] {
  return A8S_CRD_FILES.flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(CRD_DIR, f), 'utf8')).map((d) => d.toJS() as KubernetesObject)).filter(
    (o) => o?.kind === 'CustomResourceDefinition',
  );
}

/** Applies the a8s CRDs and waits until they are established. */
export async function installA8sCrds(kc: KubeConfig): Promise<void> {
  const crds = a8sCrds();
  await applyManifests(kc, crds);
  await waitForCrdsEstablished(
    kc,
    crds.map((c) => c.metadata!.name!),
  );
}
