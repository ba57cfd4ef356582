/**
 * The end-of-soak comparison for `npm run bench:soak`: what the load generator wrote (its model of
 * live and deleted claims per app cluster), what is in the app clusters (downstream) and what is on the
 * control plane (upstream), claims and their credential Secrets. Pure: the caller lists the objects.
 */

export interface ClaimView {
  namespace: string;
  name: string;
  spec: unknown;
  status?: unknown;
  /** metadata.deletionTimestamp is set */
  deleting?: boolean;
}

export interface SecretView {
  namespace: string;
  name: string;
  /** decoded data */
  data: Record<string, string>;
}

export interface ClusterState {
  /** app cluster name, used in the messages */
  cluster: string;
  /** claims the generator left alive: `ns/name` → the spec it last wrote */
  live: ReadonlyMap<string, unknown>;
  /** claims the generator deleted (`ns/name`) and did not create again */
  deleted: ReadonlySet<string>;
  /** consumer namespace → provider namespace (APIServiceNamespace status), for this cluster */
  namespaces: Readonly<Record<string, string>>;
  /** claims in the app cluster (all namespaces the generator uses) */
  down: readonly ClaimView[];
  /** credential Secrets in the app cluster */
  downSecrets: readonly SecretView[];
}

export interface SoakState {
  clusters: readonly ClusterState[];
  /** every claim on the control plane, all namespaces */
  up: readonly ClaimView[];
  /** every credential Secret on the control plane */
  upSecrets: readonly SecretView[];
  /** name of the credential Secret of a claim */
  secretName(claim: string): string;
  /** the status the provider writes for a spec (the final state) */
  expectedStatus(spec: unknown): unknown;
  /** the credential data the provider writes for a claim and its spec */
  expectedSecret(claim: string, spec: unknown): Record<string, string>;
}

export interface Difference {
  /** e.g. `app-1 soak-a/c-17 (claim)` or `control plane cluster-x-soak-a/c-17-creds (Secret)` */
  object: string;
  difference: string;
}

/** JSON with sorted object keys, so equal values print (and compare) equal. */
export function canonical(v: unknown): string {
  return (
    JSON.stringify(v, (_k, x: unknown) =>
      x && typeof x === 'object' && !Array.isArray(x)
        ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : x,
    ) ?? 'undefined'
  );
}

const key = (ns: string, name: string) => `${ns}/${name}`;

function index<T extends { namespace: string; name: string }>(xs: readonly T[]): { map: Map<string, T>; dups: string[] } {
  const map = new Map<string, T>();
  const dups: string[] = [];
  for (const x of xs) {
    const k = key(x.namespace, x.name);
    if (map.has(k)) dups.push(k);
    map.set(k, x);
  }
  return { map, dups };
}

/** Keys of `data` that differ between two Secrets (values are not printed: they are credentials). */
function dataDiff(a: Record<string, string>, b: Record<string, string>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]).sort();
}

/**
 * Every divergence between the generator's model, the app clusters and the control plane: lost,
 * left-over, duplicated or unexpected claims and Secrets, spec up ≠ down, status down ≠ up, a status
 * or Secret the provider has not finished. Empty when all converged.
 */
export function compareSoak(s: SoakState): Difference[] {
  const out: Difference[] = [];
  const up = index(s.up);
  const upSecrets = index(s.upSecrets);
  const claimed = new Set<string>(); // upstream claim keys that belong to some cluster's namespace
  const claimedSecrets = new Set<string>();
  const providerOwner = new Map<string, string>(); // provider namespace → `cluster consumer-ns`

  for (const c of s.clusters) {
    const d = (object: string, difference: string) => out.push({ object: `${c.cluster} ${object}`, difference });
    for (const [cns, pns] of Object.entries(c.namespaces)) {
      const other = providerOwner.get(pns);
      if (other) d(`namespace ${cns}`, `provider namespace ${pns} is also bound to ${other}`);
      providerOwner.set(pns, `${c.cluster} ${cns}`);
    }
    const down = index(c.down);
    const downSecrets = index(c.downSecrets);
    for (const k of down.dups) d(`${k} (claim)`, 'listed twice downstream');
    const names = new Set<string>([...c.live.keys(), ...c.deleted, ...down.map.keys()]);
    const consumerOf = new Map(Object.entries(c.namespaces).map(([cns, pns]) => [pns, cns]));
    for (const u of s.up) {
      const cns = consumerOf.get(u.namespace);
      if (cns !== undefined) names.add(key(cns, u.name));
    }
    // Downstream Secrets without any claim of that name in the model show up below as unexpected.
    for (const k of [...names].sort()) {
      const slash = k.indexOf('/');
      const cns = k.slice(0, slash);
      const name = k.slice(slash + 1);
      const pns = c.namespaces[cns];
      const dn = down.map.get(k);
      const un = pns === undefined ? undefined : up.map.get(key(pns, name));
      if (un) claimed.add(key(pns!, name));
      const sname = s.secretName(name);
      const ds = downSecrets.map.get(key(cns, sname));
      const us = pns === undefined ? undefined : upSecrets.map.get(key(pns, sname));
      if (us) claimedSecrets.add(key(pns!, sname));
      const obj = `${k} (claim)`;
      const sobj = `${cns}/${sname} (credential Secret)`;
      if (c.live.has(k)) {
        const spec = c.live.get(k);
        if (pns === undefined) {
          d(obj, `consumer namespace ${cns} has no provider namespace (no APIServiceNamespace with status.namespace)`);
        }
        if (!dn) d(obj, 'lost: missing downstream');
        else {
          if (dn.deleting) d(obj, 'terminating downstream although the generator did not delete it');
          if (canonical(dn.spec) !== canonical(spec)) d(obj, `spec downstream ${canonical(dn.spec)} ≠ written ${canonical(spec)}`);
        }
        if (pns === undefined) continue;
        if (!un) {
          d(obj, `missing upstream (${pns}/${name})`);
        } else {
          if (un.deleting) d(obj, `terminating upstream (${pns}/${name})`);
          if (dn && canonical(un.spec) !== canonical(dn.spec)) d(obj, `spec upstream ${canonical(un.spec)} ≠ downstream ${canonical(dn.spec)}`);
          const want = s.expectedStatus(spec);
          if (canonical(un.status) !== canonical(want)) d(obj, `provider status upstream ${canonical(un.status)} ≠ final ${canonical(want)}`);
          if (dn && canonical(dn.status) !== canonical(un.status)) d(obj, `status downstream ${canonical(dn.status)} ≠ upstream ${canonical(un.status)}`);
        }
        const wantData = s.expectedSecret(name, spec);
        if (!us) d(sobj, `missing upstream (${pns}/${sname}): the provider has not written it`);
        else if (dataDiff(us.data, wantData).length) d(sobj, `upstream data not final in keys ${dataDiff(us.data, wantData).join(', ')}`);
        if (!ds) d(sobj, 'missing downstream');
        else if (us && dataDiff(ds.data, us.data).length) d(sobj, `data downstream ≠ upstream in keys ${dataDiff(ds.data, us.data).join(', ')}`);
      } else if (c.deleted.has(k)) {
        if (dn) d(obj, `deleted by the generator but still downstream${dn.deleting ? ' (terminating)' : ''}`);
        if (un) d(obj, `deleted by the generator but still upstream (${pns}/${name}${un.deleting ? ', terminating' : ''})`);
        if (ds) d(sobj, 'claim deleted but the Secret is still downstream');
        if (us) d(sobj, `claim deleted but the Secret is still upstream (${pns}/${sname})`);
      } else {
        if (dn) d(obj, 'unexpected downstream: the generator never created it');
        if (un) d(obj, `unexpected upstream (${pns}/${name}): duplicate or never created`);
      }
    }
    // Secrets downstream whose claim the model does not know.
    const secretsOfModel = new Set([...c.live.keys(), ...c.deleted].map((k) => key(k.slice(0, k.indexOf('/')), s.secretName(k.slice(k.indexOf('/') + 1)))));
    for (const ds of c.downSecrets) {
      if (!secretsOfModel.has(key(ds.namespace, ds.name)))
        d(`${ds.namespace}/${ds.name} (credential Secret)`, 'unexpected downstream: no claim of the generator owns it');
    }
  }
  for (const k of up.dups) out.push({ object: `control plane ${k} (claim)`, difference: 'listed twice upstream' });
  for (const u of s.up) {
    const k = key(u.namespace, u.name);
    if (claimed.has(k)) continue;
    const owner = providerOwner.get(u.namespace);
    out.push({
      object: `control plane ${k} (claim)`,
      difference: owner ? `unexpected upstream object in the namespace of ${owner}` : 'upstream object in a namespace no app cluster is bound to (duplicate?)',
    });
  }
  for (const us of s.upSecrets) {
    const k = key(us.namespace, us.name);
    if (claimedSecrets.has(k)) continue;
    out.push({ object: `control plane ${k} (credential Secret)`, difference: 'no claim of the generator owns it' });
  }
  return out;
}
