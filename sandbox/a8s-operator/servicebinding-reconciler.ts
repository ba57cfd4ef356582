/**
 * Reconciles `servicebindings.servicebindings.anynines.com` against the local PostgreSQL servers: a real role
 * with a generated password that may connect to the instance's application database and create in its `public`
 * schema (so one binding's tables are not readable by another binding's role unless granted), and the credentials
 * Secret in the a8s service-binding controller's format — `<binding>-service-binding`, type Opaque, keys
 * `username`, `password`, `database`, `instance_service` (the server's loopback address; the port is always 5432).
 * Status: `implemented`, `secret` {name, namespace}, `error`. Deleting the binding ends the role's sessions, hands
 * its objects to the instance's superuser, drops the role and deletes the Secret.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { apiVersionOf, CoreResources, isNotFound, type KubeClient, type KubeObject } from '../../runtime/core/client.js';
import { RequeueError, type ReconcileContext, type ReconcileResult } from '../../runtime/core/controller.js';
import type { Informer } from '../../runtime/core/informer.js';
import { recordEvent } from './events.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from './finalizers.js';
import type { LocalInstance, LocalInstances } from './instances.js';
import { dropLoginRole } from './local-postgres.js';
import { A8S_RESOURCES, APP_DATABASE, CLUSTER_STATUS, OPERATOR_NAME, secretNameOf, type A8sServiceBinding, type Postgresql } from './types.js';

const REF = A8S_RESOURCES.serviceBindings;
const PG = A8S_RESOURCES.postgresqls;

export interface ServiceBindingReconcilerDeps {
  readonly client: KubeClient;
  readonly informer: Informer<A8sServiceBinding>;
  readonly postgresqls: Informer<Postgresql>;
  readonly instances: LocalInstances;
}

type Secret = KubeObject & { type?: string; data?: Record<string, string> };
type Status = NonNullable<A8sServiceBinding['status']>;

const b64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

/** The Postgresql an a8s ServiceBinding points at, or a message naming the field that is wrong. */
export function instanceKeyOf(sb: A8sServiceBinding): { key: string } | { error: string } {
  const i = sb.spec?.instance;
  if (!i?.name) return { error: 'spec.instance.name is missing' };
  if (i.kind !== PG.kind || i.apiVersion?.split('/')[0] !== PG.group) {
    return {
      error: `spec.instance ${i.apiVersion ?? '<no apiVersion>'} ${i.kind ?? '<no kind>'}: the sandbox a8s operator binds only ${PG.kind} (${apiVersionOf(PG)})`,
    };
  }
  return { key: `${i.namespace || sb.metadata.namespace}/${i.name}` };
}

export class ServiceBindingReconciler {
  constructor(private readonly deps: ServiceBindingReconcilerDeps) {}

  async reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const { client, informer } = this.deps;
    const sb = informer.get(key);
    if (!sb) return;
    const ns = sb.metadata.namespace!;
    const secretName = secretNameOf(sb.metadata.name!);
    const target = instanceKeyOf(sb);
    const inst = 'key' in target ? this.deps.instances.get(target.key) : undefined;

    if (sb.metadata.deletionTimestamp) {
      if (!hasFinalizer(sb)) return;
      const username = await this.usernameOf(sb, inst);
      if (username && inst && !inst.server.running) throw new RequeueError(`waiting for ${inst.key} to run again to drop role ${username}`, 2_000);
      if (username && inst) await this.dropRole(inst, username);
      if (inst) fs.rmSync(this.recordFile(inst, sb), { force: true });
      await client.delete(CoreResources.secrets, ns, secretName);
      if (username) await recordEvent(client, REF, sb, 'Normal', 'Revoked', `role ${username} dropped, Secret ${secretName} deleted`, ctx.log);
      await removeFinalizer(client, REF, sb);
      return;
    }
    if (!hasFinalizer(sb)) {
      await addFinalizer(client, REF, sb);
      return;
    }
    const status: Status = { ...(sb.status ?? {}) };
    if ('error' in target) {
      await this.writeStatus(sb, status, { implemented: false, error: target.error }, ctx.log);
      return; // nothing to retry until the object changes
    }
    const pgObj = this.deps.postgresqls.get(target.key);
    if (!pgObj || !inst || !inst.server.running || pgObj.status?.clusterStatus !== CLUSTER_STATUS.running) {
      const why = !pgObj ? 'does not exist' : `is not running yet (clusterStatus ${pgObj.status?.clusterStatus ?? 'unset'})`;
      await this.writeStatus(sb, status, { implemented: false, error: `${PG.kind} ${target.key} ${why}` }, ctx.log);
      throw new RequeueError(`waiting for ${target.key}`, 2_000);
    }

    const existing = await client.getOrNull<Secret>(CoreResources.secrets, ns, secretName);
    let username = b64(existing?.data?.['username']);
    let password = b64(existing?.data?.['password']);
    if (!username || !password) {
      username = (await this.usernameOf(sb, inst)) ?? `binding_${randomBytes(6).toString('hex')}`;
      password = randomBytes(24).toString('base64url');
    }
    // The awaits above may have let the Postgresql's deletion (or stop()) remove the instance and its
    // folder; a recursive mkdir would then bring the deleted folder back. The check and the write are
    // synchronous, so destroy() either still lists the instance (and removes this file after) or not.
    if (this.deps.instances.get(target.key) !== inst) throw new RequeueError(`${target.key} was removed meanwhile`, 2_000);
    fs.mkdirSync(path.dirname(this.recordFile(inst, sb)), { recursive: true, mode: 0o700 });
    fs.writeFileSync(this.recordFile(inst, sb), username);
    await this.ensureRole(inst, username, password);
    const stringData = { username, password, database: APP_DATABASE, instance_service: inst.server.address };
    const name = target.key.split('/')[1]!;
    if (!existing) {
      await client.create(CoreResources.secrets, {
        metadata: {
          name: secretName,
          namespace: ns,
          labels: { 'a8s.a9s/dsi-group': PG.group, 'a8s.a9s/dsi-kind': PG.kind, 'a8s.a9s/dsi-name': name, 'app.kubernetes.io/managed-by': OPERATOR_NAME },
          ownerReferences: [
            { apiVersion: apiVersionOf(REF), kind: REF.kind!, name: sb.metadata.name!, uid: sb.metadata.uid!, controller: true, blockOwnerDeletion: true },
          ],
        },
        type: 'Opaque',
        stringData,
      } as KubeObject);
      await recordEvent(
        client,
        REF,
        sb,
        'Normal',
        'Implemented',
        `role ${username} on ${inst.server.address}:5432 (database ${APP_DATABASE}); credentials in Secret ${secretName}`,
        ctx.log,
      );
    } else if (Object.entries(stringData).some(([k, v]) => b64(existing.data?.[k]) !== v) || existing.type !== 'Opaque') {
      // the instance moved (address) or someone edited the Secret: write what the role really is
      await client.update(CoreResources.secrets, { ...existing, type: existing.type ?? 'Opaque', data: undefined, stringData } as KubeObject);
    }
    await this.writeStatus(sb, status, { implemented: true, secret: { name: secretName, namespace: ns }, error: undefined }, ctx.log);
  }

  /** The role this binding was given (recorded next to the instance's data, or in its Secret). */
  private async usernameOf(sb: A8sServiceBinding, inst: LocalInstance | undefined): Promise<string | undefined> {
    if (inst) {
      try {
        return fs.readFileSync(this.recordFile(inst, sb), 'utf8').trim();
      } catch {
        /* not recorded */
      }
    }
    const s = await this.deps.client.getOrNull<Secret>(CoreResources.secrets, sb.metadata.namespace!, secretNameOf(sb.metadata.name!));
    return b64(s?.data?.['username']);
  }

  private recordFile(inst: LocalInstance, sb: A8sServiceBinding): string {
    return path.join(inst.server.dir, 'bindings', `${sb.metadata.namespace}_${sb.metadata.name}_${sb.metadata.uid}`);
  }

  private async ensureRole(inst: LocalInstance, username: string, password: string): Promise<void> {
    const c = await inst.server.superuser(APP_DATABASE);
    try {
      const role = c.escapeIdentifier(username);
      const exists = await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username]);
      await c.query(`${exists.rowCount ? 'ALTER' : 'CREATE'} ROLE ${role} LOGIN PASSWORD ${c.escapeLiteral(password)}`);
      await c.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${c.escapeIdentifier(APP_DATABASE)} TO ${role}`);
      await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
    } finally {
      await c.end();
    }
  }

  private async dropRole(inst: LocalInstance, username: string): Promise<void> {
    const c = await inst.server.superuser(APP_DATABASE);
    try {
      const exists = await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username]);
      if (!exists.rowCount) return;
      await dropLoginRole(c, username);
    } finally {
      await c.end();
    }
  }

  private async writeStatus(
    sb: A8sServiceBinding,
    cur: Status,
    want: { implemented: boolean; secret?: { name: string; namespace: string }; error: string | undefined },
    log: Logger,
  ): Promise<void> {
    if (
      cur.implemented === want.implemented &&
      (cur.error ?? undefined) === want.error &&
      cur.secret?.name === want.secret?.name &&
      cur.secret?.namespace === want.secret?.namespace
    )
      return;
    try {
      await this.deps.client.mergePatch(
        REF,
        sb.metadata.namespace,
        sb.metadata.name!,
        { status: { implemented: want.implemented, secret: want.secret ?? null, error: want.error ?? null } },
        'status',
      );
      Object.assign(cur, want);
      log.info({ implemented: want.implemented, error: want.error }, 'status');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
