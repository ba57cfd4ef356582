/**
 * Reconciles `postgresqls.postgresql.anynines.com` with a real local PostgreSQL server per object and reports
 * status the way the a8s PostgreSQL operator does: `readyReplicas`, `clusterStatus` ("Running" once all
 * `spec.replicas` are ready, else "NotRunning") and `error`. What a single local server can honour of the spec is
 * applied (parameters through sandbox.conf: reload, or restart for postmaster settings); what it cannot is named in
 * `status.error`. A server process that dies is reported (status, Event) and started again.
 */
import type { Logger } from 'pino';
import { isNotFound, type KubeClient } from '../../runtime/core/client.js';
import { RequeueError, type ReconcileContext, type ReconcileResult } from '../../runtime/core/controller.js';
import type { Informer } from '../../runtime/core/informer.js';
import { recordEvent } from './events.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from './finalizers.js';
import type { LocalInstance, LocalInstances } from './instances.js';
import { AddressInUseError } from './local-postgres.js';
import { planServer, settingsChange, type ServerPlan } from './server-settings.js';
import { A8S_RESOURCES, APP_DATABASE, CLUSTER_STATUS, type Postgresql } from './types.js';

const REF = A8S_RESOURCES.postgresqls;

export interface PostgresqlReconcilerDeps {
  readonly client: KubeClient;
  readonly informer: Informer<Postgresql>;
  readonly instances: LocalInstances;
}

type Status = NonNullable<Postgresql['status']>;
interface StatusWant {
  readyReplicas: number;
  clusterStatus: string;
  error: string | undefined;
}

export class PostgresqlReconciler {
  constructor(private readonly deps: PostgresqlReconcilerDeps) {}

  async reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const { client, informer, instances } = this.deps;
    const obj = informer.get(key);
    if (!obj) {
      // deleted while we did not hold the finalizer (or the informer missed it): no server may outlive it
      if (instances.get(key)) await instances.destroy(key);
      return;
    }
    if (obj.metadata.deletionTimestamp) {
      if (!hasFinalizer(obj)) return;
      await instances.destroy(key);
      await recordEvent(client, REF, obj, 'Normal', 'Deleted', 'local PostgreSQL server stopped and its data removed', ctx.log);
      await removeFinalizer(client, REF, obj);
      return;
    }
    if (!hasFinalizer(obj)) {
      await addFinalizer(client, REF, obj);
      return; // the update event brings the object back
    }

    const status: Status = { ...(obj.status ?? {}) };
    const writeStatus = (want: StatusWant, log: Logger) => this.writeStatus(obj, status, want, log);
    const fresh = !instances.get(key);
    const inst = await instances.ensure(key);
    if (fresh)
      await recordEvent(
        client,
        REF,
        obj,
        'Normal',
        'Created',
        `local PostgreSQL ${instances.binaries.major} server on ${inst.server.address}:${inst.server.port} (data ${inst.server.dataDir})`,
        ctx.log,
      );
    const plan = planServer(obj.spec ?? {}, inst.server.address, inst.server.port, instances.binaries.major);

    if (!plan.run) {
      if (inst.server.running) await inst.server.stop();
      return writeStatus({ readyReplicas: 0, clusterStatus: CLUSTER_STATUS.notRunning, error: messageOf(plan, []) }, ctx.log);
    }

    if (inst.lastExit && !inst.server.running) {
      const e = inst.lastExit;
      const how = e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
      const msg = `the PostgreSQL server process (pid ${e.pid}) exited unexpectedly (${how}) at ${e.at.toISOString()}; restarting it`;
      ctx.log.warn({ pid: e.pid, how }, 'server exited; restarting');
      await writeStatus({ readyReplicas: 0, clusterStatus: CLUSTER_STATUS.notRunning, error: msg }, ctx.log);
      await recordEvent(client, REF, obj, 'Warning', 'ServerExited', msg, ctx.log);
    }
    try {
      await this.converge(inst, plan, ctx);
    } catch (e) {
      const msg = `the local PostgreSQL server does not run: ${(e as Error).message}`;
      await writeStatus({ readyReplicas: 0, clusterStatus: CLUSTER_STATUS.notRunning, error: messageOf(plan, [msg]) }, ctx.log);
      await recordEvent(client, REF, obj, 'Warning', 'ServerFailed', msg, ctx.log);
      throw new RequeueError(msg, 5_000);
    }
    if (inst.lastExit) {
      await recordEvent(
        client,
        REF,
        obj,
        'Normal',
        'ServerRestarted',
        `the PostgreSQL server runs again (pid ${inst.server.pid}) after pid ${inst.lastExit.pid} exited`,
        ctx.log,
      );
      inst.lastExit = undefined;
    }
    const ready = inst.server.running ? 1 : 0;
    return writeStatus(
      {
        readyReplicas: ready,
        clusterStatus: ready >= plan.replicas && plan.blocking.length === 0 ? CLUSTER_STATUS.running : CLUSTER_STATUS.notRunning,
        error: messageOf(plan, []),
      },
      ctx.log,
    );
  }

  /** Start, reload or restart so that the server runs with `plan`; then the application database and extensions. */
  private async converge(inst: LocalInstance, plan: ServerPlan, ctx: ReconcileContext): Promise<void> {
    const s = inst.server;
    if (!s.running) {
      try {
        await s.start(plan);
      } catch (e) {
        if (!(e instanceof AddressInUseError)) throw e;
        ctx.log.info({ address: s.address }, 'address taken by another process; moving the instance');
        const moved = await this.deps.instances.moveAddress(inst.key);
        await moved.server.start({ ...plan, settings: { ...plan.settings, listen_addresses: `'${moved.server.address}'` } });
      }
    } else {
      const change = settingsChange(s.settings, plan);
      if (change.restart) {
        ctx.log.info({ changed: change.changed }, 'restarting the server for new settings');
        await s.stop();
        await s.start(plan);
      } else if (change.changed.length) {
        ctx.log.info({ changed: change.changed }, 'reloading the server for new settings');
        s.reload(plan);
      }
    }
    const c = await inst.server.superuser('postgres');
    try {
      const have = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [APP_DATABASE]);
      if (!have.rowCount) {
        await c.query(`CREATE DATABASE ${c.escapeIdentifier(APP_DATABASE)}`);
        // only the roles of service bindings (granted one by one) may connect
        await c.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${c.escapeIdentifier(APP_DATABASE)} FROM PUBLIC`);
      }
    } finally {
      await c.end();
    }
    if (plan.extensions.length) {
      const a = await inst.server.superuser(APP_DATABASE);
      try {
        for (const e of plan.extensions) await a.query(`CREATE EXTENSION IF NOT EXISTS ${a.escapeIdentifier(e)}`);
      } finally {
        await a.end();
      }
    }
  }

  /** Patches the status when it differs from `cur` (the status as last read or written), then updates `cur`. */
  private async writeStatus(obj: Postgresql, cur: Status, want: StatusWant, log: Logger): Promise<void> {
    if (cur.readyReplicas === want.readyReplicas && cur.clusterStatus === want.clusterStatus && (cur.error ?? undefined) === want.error) return;
    try {
      await this.deps.client.mergePatch(
        REF,
        obj.metadata.namespace,
        obj.metadata.name!,
        { status: { readyReplicas: want.readyReplicas, clusterStatus: want.clusterStatus, error: want.error ?? null } },
        'status',
      );
      Object.assign(cur, want);
      log.info({ clusterStatus: want.clusterStatus, readyReplicas: want.readyReplicas, error: want.error }, 'status');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

/** `status.error`: what keeps the instance from the spec, then what the local server runs without. */
export function messageOf(plan: ServerPlan, problems: readonly string[]): string | undefined {
  const parts = [...problems, ...plan.blocking];
  if (plan.notApplied.length) parts.push(`not applied by the sandbox's local server: ${plan.notApplied.join('; ')}`);
  return parts.length ? parts.join('. ') : undefined;
}
