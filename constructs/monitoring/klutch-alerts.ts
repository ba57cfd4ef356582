/** klutch-kit's alerting rules ({@link klutchAlertRules}) as a Prometheus Operator `PrometheusRule`. */
import { Construct } from 'constructs';
import { PrometheusRule, PrometheusRuleSpecGroupsRulesExpr } from '../../imports/prometheus-operator-monitoring.coreos.com.js';
import { fail } from '../_errors.js';
import { checkDnsLabel } from '../runtime/_pod.js';
import { standardLabels } from '../runtime/_defaults.js';
import { klutchAlertRules, type AlertGroup, type AlertOptions } from './alert-rules.js';

export interface KlutchAlertsProps extends AlertOptions {
  /** Namespace of the PrometheusRule. @default "monitoring" */
  readonly namespace?: string;
  /** Name of the PrometheusRule. @default "klutch-kit" */
  readonly name?: string;
  /** Labels for the Prometheus resource's `ruleSelector` (e.g. `{ release: "kube-prometheus-stack" }`). @default - none */
  readonly labels?: Record<string, string>;
}

export class KlutchAlerts extends Construct {
  public readonly rule: PrometheusRule;
  /** The rule groups, as written. */
  public readonly groups: readonly AlertGroup[];

  constructor(scope: Construct, id: string, props: KlutchAlertsProps = {}) {
    super(scope, id);
    const P = 'KlutchAlertsProps';
    const namespace = checkDnsLabel(`${P}.namespace`, props.namespace ?? 'monitoring');
    const name = checkDnsLabel(`${P}.name`, props.name ?? 'klutch-kit');
    for (const [k, v] of Object.entries(props.labels ?? {})) {
      if (typeof v !== 'string' || v.length > 63) fail(`${P}.labels["${k}"]`, v, 'must be a label value (a string of at most 63 characters)');
    }
    this.groups = klutchAlertRules(props);
    this.rule = new PrometheusRule(this, 'PrometheusRule', {
      metadata: { name, namespace, labels: { ...standardLabels(name, 'alerts'), ...props.labels } },
      spec: {
        groups: this.groups.map((g) => ({
          name: g.name,
          rules: g.rules.map((r) => ({ ...r, expr: PrometheusRuleSpecGroupsRulesExpr.fromString(r.expr) })),
        })),
      },
    });
  }
}
