/**
 * What a data service defines that must be unique in its cluster — its kinds and resources per
 * group, its backends' Compositions (cluster-scoped, named after the backend) and its
 * APIServiceExportTemplate — checked against the data services created before it in the same chart,
 * so that a clash is an error naming both data services instead of two objects of one name.
 */
import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';

/** The names a data service takes in its cluster. */
export interface DataServiceNames {
  /** The construct path, e.g. `control-plane/Catalogue/postgresql`. */
  readonly path: string;
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly claimKind: string;
  readonly claimPlural: string;
  readonly backends: readonly string[];
  readonly exportTemplate: { readonly namespace: string; readonly name: string };
}

const byCluster = new WeakMap<Construct, DataServiceNames[]>();

/** The chart a construct is in (one cluster's objects), else its root. */
function clusterOf(c: Construct): Construct {
  const scopes = c.node.scopes;
  for (let i = scopes.length - 1; i >= 0; i--) if (Chart.isChart(scopes[i])) return scopes[i];
  return c.node.root;
}

/** The clash of two data services, or undefined. */
export function clash(a: DataServiceNames, b: DataServiceNames): string | undefined {
  const both = `DataService "${a.path}" and DataService "${b.path}"`;
  if (a.group === b.group) {
    for (const k of [b.kind, b.claimKind]) {
      if (k === a.kind || k === a.claimKind)
        return `${both} both define kind "${k}" in group "${b.group}"; give one of them another kind (DataServiceProps.kind, claimKind) or group`;
    }
    for (const p of [b.plural, b.claimPlural]) {
      if (p === a.plural || p === a.claimPlural)
        return `${both} both define the resource "${p}.${b.group}"; give one of them another plural (DataServiceProps.plural, claimPlural) or group`;
    }
  }
  const backend = b.backends.find((n) => a.backends.includes(n));
  if (backend !== undefined)
    return `${both} both have a backend "${backend}" (its Composition "${backend}" is cluster-scoped); give one of them another name (the backend's name prop)`;
  if (a.exportTemplate.namespace === b.exportTemplate.namespace && a.exportTemplate.name === b.exportTemplate.name)
    return (
      `${both} both export through the APIServiceExportTemplate ${b.exportTemplate.namespace}/${b.exportTemplate.name} ` +
      `(groups "${a.group}" and "${b.group}"); give one of them another claimPlural or exportTemplateNamespace`
    );
  return undefined;
}

/** Records a data service's names in its cluster; throws when one clashes with an earlier data service's. */
export function registerDataService(ds: Construct, names: DataServiceNames): void {
  const cluster = clusterOf(ds);
  const earlier = byCluster.get(cluster) ?? [];
  for (const e of earlier) {
    const problem = clash(e, names);
    if (problem) throw new Error(problem);
  }
  byCluster.set(cluster, [...earlier, names]);
}
