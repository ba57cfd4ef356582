/**
 * API Priority and Fairness for konnectors on the control plane: one PriorityLevelConfiguration
 * for all konnectors, and FlowSchemas that put each konnector's requests into it as a flow of its
 * own, so that one busy app cluster (a burst of thousands of claims) queues behind its own requests
 * instead of starving the other app clusters, the backend and Crossplane.
 *
 * - FlowSchema `<name>-control-plane` (precedence `matchingPrecedence - 50`): every ServiceAccount
 *   of the namespaces in `controlPlaneNamespaces` (the backend, Crossplane and its providers) goes to
 *   the built-in `workload-high` level, ahead of the konnectors.
 * - FlowSchema `<name>` (`matchingPrecedence`, after the built-in schemas of kube-system up to
 *   900): requests of ServiceAccounts (each konnector talks to the control plane as ServiceAccount
 *   `klutch-binder` of its cluster namespace; ServiceAccount subjects need a namespace, so the group
 *   `system:serviceaccounts` is matched) on the binding API group and `exportedApiGroups` go to
 *   level `<name>` with `distinguisherMethod: ByUser`: one flow per konnector, fair-queued.
 *
 * flowcontrol.apiserver.k8s.io/v1 (Kubernetes ≥ 1.29); cdk8s-plus-28 only has the beta versions.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import { checkDnsLabel, checkDnsSubdomain } from '../_names.js';
import { BIND_GROUP } from '../../contract/api/constants.js';
import { BACKEND_NAMESPACE, standardLabels } from './_defaults.js';
import { checkInt } from './_pod.js';

export interface KonnectorFlowControlProps {
  /** Name of the PriorityLevelConfiguration and the konnectors' FlowSchema. @default "klutch-konnectors" */
  readonly name?: string;
  /** Seats of the konnectors' level relative to the others (built-in: workload-low 100, global-default 20). @default 40 */
  readonly nominalConcurrencyShares?: number;
  /** Percent of the level's seats other levels may borrow while konnectors are idle. @default 50 */
  readonly lendablePercent?: number;
  /** Queues of the level (shuffle sharding over konnectors). @default 64 */
  readonly queues?: number;
  /** Queues each konnector's flow is dealt. @default 6 */
  readonly handSize?: number;
  /** Requests waiting per queue before a 429. @default 50 */
  readonly queueLengthLimit?: number;
  /** Matching precedence of the konnectors' FlowSchema (lower wins; built-in kube-system schemas end at 900). @default 1000 */
  readonly matchingPrecedence?: number;
  /** API groups of the exported data services (the claims konnectors sync), besides klutch.anynines.com. @default [] */
  readonly exportedApiGroups?: string[];
  /** Namespaces whose ServiceAccounts are control-plane components, classified ahead of konnectors. @default ["klutch-system", "crossplane-system"] */
  readonly controlPlaneNamespaces?: string[];
}

export class KonnectorFlowControl extends Construct {
  /** The konnectors' priority level. */
  public readonly priorityLevel: ApiObject;
  /** The konnectors' FlowSchema. */
  public readonly flowSchema: ApiObject;
  /** The control-plane components' FlowSchema (to workload-high). */
  public readonly controlPlaneFlowSchema: ApiObject;

  constructor(scope: Construct, id: string, props: KonnectorFlowControlProps = {}) {
    super(scope, id);
    const P = 'KonnectorFlowControlProps';
    if (typeof props !== 'object' || props === null) fail(P, props, 'must be an object');
    const name = checkDnsLabel(`${P}.name`, props.name ?? 'klutch-konnectors', 50);
    const shares = checkInt(`${P}.nominalConcurrencyShares`, props.nominalConcurrencyShares ?? 40, 1, 1000);
    const lendable = checkInt(`${P}.lendablePercent`, props.lendablePercent ?? 50, 0, 100);
    const queues = checkInt(`${P}.queues`, props.queues ?? 64, 1, 128);
    const handSize = checkInt(`${P}.handSize`, props.handSize ?? 6, 1, queues);
    const queueLengthLimit = checkInt(`${P}.queueLengthLimit`, props.queueLengthLimit ?? 50, 1, 10_000);
    const precedence = checkInt(`${P}.matchingPrecedence`, props.matchingPrecedence ?? 1000, 951, 9999);
    const groups = props.exportedApiGroups ?? [];
    if (!Array.isArray(groups)) fail(`${P}.exportedApiGroups`, groups, 'must be a list of API groups');
    groups.forEach((g, i) => checkDnsSubdomain(`${P}.exportedApiGroups[${i}]`, g));
    if (groups.includes(BIND_GROUP)) fail(`${P}.exportedApiGroups`, groups, `must not repeat ${BIND_GROUP} (always included)`);
    const cpNamespaces = props.controlPlaneNamespaces ?? [BACKEND_NAMESPACE, 'crossplane-system'];
    if (!Array.isArray(cpNamespaces) || cpNamespaces.length === 0) fail(`${P}.controlPlaneNamespaces`, cpNamespaces, 'must list at least one namespace');
    cpNamespaces.forEach((n, i) => checkDnsLabel(`${P}.controlPlaneNamespaces[${i}]`, n));
    const labels = standardLabels(name, 'flow-control');
    const api = 'flowcontrol.apiserver.k8s.io/v1';

    this.priorityLevel = new ApiObject(this, 'PriorityLevel', {
      apiVersion: api,
      kind: 'PriorityLevelConfiguration',
      metadata: { name, labels },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: shares,
          lendablePercent: lendable,
          limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } },
        },
      },
    });
    this.controlPlaneFlowSchema = new ApiObject(this, 'ControlPlaneFlowSchema', {
      apiVersion: api,
      kind: 'FlowSchema',
      metadata: { name: `${name}-control-plane`, labels },
      spec: {
        priorityLevelConfiguration: { name: 'workload-high' },
        matchingPrecedence: precedence - 50,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: cpNamespaces.map((namespace) => ({ kind: 'ServiceAccount', serviceAccount: { namespace, name: '*' } })),
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          },
        ],
      },
    });
    this.flowSchema = new ApiObject(this, 'FlowSchema', {
      apiVersion: api,
      kind: 'FlowSchema',
      metadata: { name, labels },
      spec: {
        priorityLevelConfiguration: { name },
        matchingPrecedence: precedence,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'Group', group: { name: 'system:serviceaccounts' } }],
            resourceRules: [{ verbs: ['*'], apiGroups: [BIND_GROUP, ...groups], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          },
        ],
      },
    });
  }
}
