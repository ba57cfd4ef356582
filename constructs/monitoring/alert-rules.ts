/**
 * klutch-kit's alerting rules, as Prometheus rule groups: the konnector stops heartbeating, sync
 * errors persist, a work queue backs up, the backend refuses many logins, a component is not
 * scraped at all. Thresholds are options; every expression reads metrics the runtime registers.
 */
import { fail } from '../_errors.js';
import { MetricsComponent } from './metrics-target.js';

export interface AlertOptions {
  /** Which components' alerts to include. @default both */
  readonly components?: readonly MetricsComponent[];
  /** `job` label of the konnector series. @default "konnector" */
  readonly konnectorJob?: string;
  /** `job` label of the backend series. @default "klutch-backend" */
  readonly backendJob?: string;
  /** A heartbeat older than this many intervals fires KlutchKonnectorNotHeartbeating. @default 3 */
  readonly missedHeartbeats?: number;
  /** Keys waiting in one work queue for 10 minutes that fire Klutch*QueueBackingUp. @default 100 */
  readonly queueDepth?: number;
  /** Refused logins/tokens within 10 minutes that fire KlutchBackendLoginFailures. @default 20 */
  readonly loginFailures?: number;
  /** How long sync errors must go on to fire KlutchKonnectorSyncErrors. @default "15m" */
  readonly syncErrorsFor?: string;
}

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

export interface AlertGroup {
  readonly name: string;
  readonly rules: AlertRule[];
}

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

function rule(alert: string, expr: string, forDuration: string, severity: string, summary: string, description: string): AlertRule {
  return {
    alert,
    expr,
    for: forDuration,
    labels: { severity },
    annotations: { summary, description, runbook: `klutch-kit docs/monitoring.md#${alert.toLowerCase()}` },
  };
}

/** Builds the rule groups (one per component). */
export function klutchAlertRules(options: AlertOptions = {}): AlertGroup[] {
  const P = 'AlertOptions';
  const components = options.components ?? [MetricsComponent.KONNECTOR, MetricsComponent.BACKEND];
  if (!Array.isArray(components) || components.length === 0) fail(`${P}.components`, components, 'must list at least one MetricsComponent');
  components.forEach((c, i) => {
    if (!(c instanceof MetricsComponent)) fail(`${P}.components[${i}]`, c, `must be one of ${MetricsComponent.all.join(', ')}`);
  });
  const kJob = job(`${P}.konnectorJob`, options.konnectorJob ?? 'konnector');
  const bJob = job(`${P}.backendJob`, options.backendJob ?? 'klutch-backend');
  const missed = positive(`${P}.missedHeartbeats`, options.missedHeartbeats ?? 3);
  const depth = positive(`${P}.queueDepth`, options.queueDepth ?? 100);
  const logins = positive(`${P}.loginFailures`, options.loginFailures ?? 20);
  const syncFor = options.syncErrorsFor ?? '15m';
  if (typeof syncFor !== 'string' || !DURATION.test(syncFor)) fail(`${P}.syncErrorsFor`, syncFor, 'is not a Prometheus duration (e.g. "15m")');
  const k = `job="${kJob}"`;
  const b = `job="${bJob}"`;

  const groups: AlertGroup[] = [];
  if (components.includes(MetricsComponent.KONNECTOR)) {
    groups.push({
      name: 'klutch-konnector',
      rules: [
        rule(
          'KlutchKonnectorDown',
          `max by (namespace) (up{${k}}) == 0`,
          '5m',
          'critical',
          'No konnector replica answers /metrics',
          'Prometheus scraped no konnector pod in namespace {{ $labels.namespace }} for 5 minutes: bound objects are not synced in either direction.',
        ),
        rule(
          'KlutchKonnectorNotHeartbeating',
          `time() - max by (namespace, cluster_namespace) (klutch_konnector_last_heartbeat_timestamp_seconds{${k}}) > ${missed} * max by (namespace, cluster_namespace) (klutch_konnector_heartbeat_interval_seconds{${k}})`,
          '5m',
          'critical',
          'Konnector stopped heartbeating to the control plane',
          `The last heartbeat of the app cluster bound as {{ $labels.cluster_namespace }} is older than ${missed} heartbeat intervals: the control plane will consider the konnector gone. Check the binding's Heartbeating condition and the provider kubeconfig.`,
        ),
        rule(
          'KlutchKonnectorHeartbeatErrors',
          `sum by (namespace, cluster_namespace) (rate(klutch_konnector_heartbeats_total{${k}, result="error"}[10m])) > 0 and sum by (namespace, cluster_namespace) (rate(klutch_konnector_heartbeats_total{${k}, result="success"}[10m])) == 0`,
          '10m',
          'warning',
          'Konnector heartbeats fail',
          'Every heartbeat write into the ClusterBinding of {{ $labels.cluster_namespace }} failed for 10 minutes (credentials rotated or revoked, RBAC, control plane unreachable).',
        ),
        rule(
          'KlutchKonnectorSyncErrors',
          `sum by (namespace, direction, resource) (rate(klutch_konnector_sync_errors_total{${k}}[5m])) > 0`,
          syncFor,
          'warning',
          'Konnector sync keeps failing',
          `Syncing {{ $labels.resource }} {{ $labels.direction }} has failed for ${syncFor} ({{ $value | humanize }} errors/s); see the konnector log and the binding's conditions.`,
        ),
        rule(
          'KlutchKonnectorQueueBackingUp',
          `max by (namespace, controller) (klutch_workqueue_depth{${k}}) > ${depth}`,
          '10m',
          'warning',
          'Konnector work queue is backing up',
          `Controller {{ $labels.controller }} has had more than ${depth} keys waiting for 10 minutes ({{ $value }} now): changes reach the other cluster late.`,
        ),
        rule(
          'KlutchKonnectorBug',
          `sum by (namespace, controller) (increase(klutch_reconcile_unexpected_errors_total{${k}}[15m])) > 0`,
          '0m',
          'warning',
          'A konnector reconcile failed with a programming error',
          'Controller {{ $labels.controller }} hit a bug (TypeError and kin) in the last 15 minutes; the stack is in the konnector log and the last one on /readyz. The key is retried with backoff.',
        ),
      ],
    });
  }
  if (components.includes(MetricsComponent.BACKEND)) {
    groups.push({
      name: 'klutch-backend',
      rules: [
        rule(
          'KlutchBackendDown',
          `max by (namespace) (up{${b}}) == 0`,
          '5m',
          'critical',
          'No bind backend replica answers /metrics',
          'Prometheus scraped no backend pod in namespace {{ $labels.namespace }} for 5 minutes: nobody can bind, and tokens are not rotated.',
        ),
        rule(
          'KlutchBackendLoginFailures',
          `sum by (namespace) (increase(klutch_backend_auth_failures_total{${b}}[10m])) > ${logins}`,
          '0m',
          'warning',
          'Many refused logins at the bind backend',
          `More than ${logins} logins, OIDC states, sessions or bearer tokens were refused in 10 minutes ({{ $value | humanize }}): a misconfigured OIDC client, expired cookies secret, or someone guessing.`,
        ),
        rule(
          'KlutchBackendBindErrors',
          `sum by (namespace, flow) (increase(klutch_backend_binds_total{${b}, result="error"}[15m])) > 0 and sum by (namespace, flow) (increase(klutch_backend_binds_total{${b}, result="ok"}[15m])) == 0`,
          '15m',
          'warning',
          'Binds fail at the bind backend',
          'Every {{ $labels.flow }} bind failed for 15 minutes; see the backend log.',
        ),
        rule(
          'KlutchBackendQueueBackingUp',
          `max by (namespace, controller) (klutch_workqueue_depth{${b}}) > ${depth}`,
          '10m',
          'warning',
          'Bind backend work queue is backing up',
          `Controller {{ $labels.controller }} has had more than ${depth} keys waiting for 10 minutes ({{ $value }} now).`,
        ),
        rule(
          'KlutchBackendBug',
          `sum by (namespace, controller) (increase(klutch_reconcile_unexpected_errors_total{${b}}[15m])) > 0`,
          '0m',
          'warning',
          'A bind backend reconcile failed with a programming error',
          'Controller {{ $labels.controller }} hit a bug in the last 15 minutes; the stack is in the backend log (source controller/…) and the last one on /readyz.',
        ),
      ],
    });
  }
  return groups;
}

function job(prop: string, v: unknown): string {
  if (typeof v !== 'string' || v === '' || /["\\\n]/.test(v)) fail(prop, v, 'must be a non-empty job name without quotes or backslashes');
  return v;
}

function positive(prop: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(prop, v, 'must be a positive number');
  return v;
}
