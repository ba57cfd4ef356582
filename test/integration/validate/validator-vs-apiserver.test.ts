/**
 * The offline validator (constructs/validate) against a real kube-apiserver: every example object
 * of the binding-API compatibility corpus (test/api/_examples.ts: generated bases, single-field
 * mutations, CEL cases, update pairs) and a set of Klutch PostgreSQL claims (derived claim CRD,
 * incl. update pairs) is sent to the API server as a dry run with strict field validation, and
 * must get the same verdict there as from `SchemaValidator`.
 *
 * Updates: the old object is created for real in its own namespace, the new one is a dry-run
 * replace over it. `status` is left out (the status subresource makes the main endpoint ignore it).
 */
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { bindingCrds, bindingKinds, type JSONSchemaProps } from '../../../constructs/api/index.js';
import { deriveClaimCrd, SchemaValidator, type CompositeResourceDefinitionLike } from '../../../constructs/validate/index.js';
import { apiErrorDetails, applyManifests, type RealCluster } from '../../../runtime/realinfra/index.js';
import { uniqueName, useCluster } from '../../realinfra/util.js';
import { baseObject, celCases, mutations, type Example } from '../../api/_examples.js';

jest.setTimeout(600_000);

const here = fileURLToPath(new URL('.', import.meta.url));
const pgXrd = parse(readFileSync(join(here, '..', '..', 'validate', 'fixtures', 'klutch', 'xp-common-postgresql_definition.yaml'), 'utf8')) as CompositeResourceDefinitionLike;
const claimCrd = deriveClaimCrd(pgXrd, { crossplane: '2' });

const getCluster = useCluster({ name: 'validate' });
let cluster: RealCluster;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let ns: string;

interface Case {
  readonly label: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly schema: JSONSchemaProps;
  readonly obj: Record<string, unknown>;
  readonly old?: Record<string, unknown>;
}

function withoutStatus(o: unknown, namespace: string): Record<string, unknown> {
  const { status: _status, ...rest } = structuredClone(o) as Record<string, unknown>;
  const md = (rest.metadata ?? {}) as Record<string, unknown>;
  rest.metadata = { ...md, namespace };
  return rest;
}

/** The API server's verdict: 'valid', or 'invalid: <message>' for 400/422; throws on anything else. */
async function serverVerdict(c: Case): Promise<string> {
  const target = { group: c.group, version: c.version, plural: c.plural };
  try {
    if (!c.old) {
      await custom.createNamespacedCustomObject({ ...target, namespace: ns, body: withoutStatus(c.obj, ns), dryRun: 'All', fieldValidation: 'Strict' });
    } else {
      const updNs = uniqueName('upd');
      await core.createNamespace({ body: { metadata: { name: updNs } } });
      const old = withoutStatus(c.old, updNs);
      const created = (await custom.createNamespacedCustomObject({ ...target, namespace: updNs, body: old })) as KubernetesObject;
      const next = withoutStatus(c.obj, updNs);
      (next.metadata as Record<string, unknown>).resourceVersion = created.metadata?.resourceVersion;
      await custom.replaceNamespacedCustomObject({
        ...target,
        namespace: updNs,
        name: String((next.metadata as { name: string }).name),
        body: next,
        dryRun: 'All',
        fieldValidation: 'Strict',
      });
    }
    return 'valid';
  } catch (e) {
    const d = apiErrorDetails(e);
    if (d.status === 400 || d.status === 422) return `invalid: ${d.message}`;
    throw new Error(`${c.label}: unexpected API server answer ${d.status}: ${d.message}`);
  }
}

function ourVerdict(c: Case): string {
  const v = new SchemaValidator(c.schema);
  const errs = v.validate(withoutStatus(c.obj, ns), c.old ? withoutStatus(c.old, ns) : undefined);
  return errs.length ? `invalid: ${errs.map((e) => `${e.path}: ${e.message}`).join('; ')}` : 'valid';
}

function bindingCases(): Case[] {
  const out: Case[] = [];
  for (const k of bindingKinds) {
    const schema = k.openAPIV3Schema();
    const add = (ex: Example) => {
      // A renamed object is another object for the API server (the name is in the URL).
      if (ex.old && (ex.old as { metadata: { name: string } }).metadata.name !== (ex.obj as { metadata: { name: string } }).metadata.name) return;
      // Status is not written through the main endpoint: mutations of it are left out.
      if (ex.label.startsWith('status')) return;
      out.push({ label: `${k.kind}: ${ex.label}`, group: k.group, version: k.version, plural: k.plural, schema, obj: ex.obj as Record<string, unknown>, old: ex.old as Record<string, unknown> | undefined });
    };
    for (const full of [false, true]) {
      const base = baseObject(k, schema, full);
      add({ label: `${full ? 'full' : 'minimal'} base`, obj: base });
      for (const m of mutations(schema, base)) add(m);
    }
  }
  for (const { kind, ex } of celCases()) {
    if (ex.old && (ex.old as { metadata: { name: string } }).metadata.name !== (ex.obj as { metadata: { name: string } }).metadata.name) continue;
    out.push({ label: `${kind.kind}: ${ex.label}`, group: kind.group, version: kind.version, plural: kind.plural, schema: kind.openAPIV3Schema(), obj: ex.obj as Record<string, unknown>, old: ex.old as Record<string, unknown> | undefined });
  }
  return out;
}

function claimCases(): Case[] {
  const schema = claimCrd.spec.versions[0].schema.openAPIV3Schema;
  const claim = (spec: Record<string, unknown>, name = 'db') => ({ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', metadata: { name }, spec });
  const a9s = { service: 'a9s-postgresql13', plan: 'postgresql-single-small', compositionRef: { name: 'a9s-postgresql' } };
  const c = (label: string, obj: Record<string, unknown>, old?: Record<string, unknown>): Case => ({ label: `PostgresqlInstance: ${label}`, group: 'anynines.com', version: 'v1', plural: 'postgresqlinstances', schema, obj, old });
  return [
    c('valid a9s claim', claim(a9s)),
    c('valid a8s claim with connection secret', claim({ service: 'a9s-postgresql14', plan: 'postgresql-replica-medium', compositionRef: { name: 'a8s-postgresql' }, writeConnectionSecretToRef: { name: 'db-creds' } })),
    c('unsupported service', claim({ ...a9s, service: 'a9s-postgresql99' })),
    c('a8s-only parameter on a9s', claim({ ...a9s, parameters: { sslCiphers: 'HIGH' } })),
    c('bionic plan on pg15', claim({ ...a9s, service: 'a9s-postgresql15', plan: 'postgresql-single-small-bionic' })),
    c('no compositionRef (rules read it)', claim({ service: 'a9s-postgresql13', plan: 'postgresql-single-small' })),
    c('name longer than 63', claim(a9s, 'x'.repeat(64))),
    c('unknown field', claim({ ...a9s, colour: 'blue' })),
    c('bad compositeDeletePolicy', claim({ ...a9s, compositeDeletePolicy: 'Later' })),
    c('maxConnections wrong type', claim({ ...a9s, parameters: { maxConnections: 'many' } })),
    c('plan upgrade', claim({ ...a9s, plan: 'postgresql-single-big' }), claim(a9s)),
    c('plan downgrade', claim(a9s), claim({ ...a9s, plan: 'postgresql-single-big' })),
    c('service change', claim({ ...a9s, service: 'a9s-postgresql15' }), claim(a9s)),
    c('ssl switched on', claim({ ...a9s, plan: 'postgresql-single-small-ssl' }), claim(a9s)),
    c('replica to single', claim(a9s), claim({ ...a9s, plan: 'postgresql-replica-small' })),
  ];
}

/** A CRD exercising CEL features: Kubernetes libraries, transition rules in list-maps, messageExpression, int-or-string. */
const probeSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      'x-kubernetes-validations': [{ rule: '!(has(self.a) && has(self.b))', message: 'a and b are exclusive' }],
      properties: {
        a: { type: 'string' },
        b: { type: 'string' },
        ports: {
          type: 'array',
          maxItems: 10,
          items: { type: 'integer', maximum: 65535 },
          'x-kubernetes-validations': [
            { rule: 'self.isSorted()', message: 'ports must be sorted' },
            { rule: 'self.sum() <= 1000', message: 'sum too big' },
            { rule: 'size(self) == 0 || (self.min() > 0 && self.max() < 700)', message: 'out of range' },
            { rule: 'self.indexOf(443) == self.lastIndexOf(443)', message: '443 twice' },
          ],
        },
        image: { type: 'string', maxLength: 100, 'x-kubernetes-validations': [{ rule: "self.find('[0-9]+$') != '' && size(self.findAll('[a-z]+')) == 2", message: 'registry/name:version' }] },
        size: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: "type(self) == string ? self == 'auto' : self >= 1", messageExpression: "'size must be auto or >= 1'" }] },
        plans: {
          type: 'array',
          maxItems: 10,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', maxLength: 20 }, replicas: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'no scaling down' }] } },
          },
        },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 }, 'x-kubernetes-list-type': 'set' },
      },
    },
  },
};
const PROBE_GROUP = 'validate.klutch-kit.test';

function probeCases(): Case[] {
  const probe = (spec: Record<string, unknown>) => ({ apiVersion: `${PROBE_GROUP}/v1`, kind: 'Probe', metadata: { name: 'p' }, spec });
  const c = (label: string, obj: Record<string, unknown>, old?: Record<string, unknown>): Case => ({ label: `Probe: ${label}`, group: PROBE_GROUP, version: 'v1', plural: 'probes', schema: probeSchema, obj, old });
  return [
    c('all fine', probe({ a: 'x', ports: [80, 443], image: 'reg/app:3', size: 'auto', plans: [{ name: 'p', replicas: 1 }], tags: ['a', 'b'] })),
    c('a and b', probe({ a: 'x', b: 'y' })),
    c('unsorted ports', probe({ ports: [443, 80] })),
    c('sum too big', probe({ ports: [600, 650] })),
    c('empty ports', probe({ ports: [] })),
    c('443 twice', probe({ ports: [443, 443] })),
    c('image without version', probe({ image: 'reg/app:latest' })),
    c('size 0', probe({ size: 0 })),
    c('size big', probe({ size: 'big' })),
    c('size 3', probe({ size: 3 })),
    c('duplicate tag', probe({ tags: ['a', 'a'] })),
    c('duplicate plan', probe({ plans: [{ name: 'p' }, { name: 'p' }] })),
    c('scale up', probe({ plans: [{ name: 'q', replicas: 1 }, { name: 'p', replicas: 3 }] }), probe({ plans: [{ name: 'p', replicas: 2 }] })),
    c('scale down (item moved)', probe({ plans: [{ name: 'q', replicas: 5 }, { name: 'p', replicas: 1 }] }), probe({ plans: [{ name: 'p', replicas: 2 }] })),
  ];
}

beforeAll(async () => {
  cluster = getCluster();
  custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  ns = uniqueName('validate');
  await applyManifests(cluster.kubeConfig, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    ...(bindingCrds() as unknown as KubernetesObject[]),
    claimCrd as unknown as KubernetesObject,
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `probes.${PROBE_GROUP}` },
      spec: { group: PROBE_GROUP, scope: 'Namespaced', names: { kind: 'Probe', plural: 'probes' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: probeSchema } }] },
    } as unknown as KubernetesObject,
  ]);
});

describe('SchemaValidator agrees with kube-apiserver', () => {
  const compare = async (cases: Case[]) => {
    const mismatches: string[] = [];
    const counts = { valid: 0, invalid: 0 };
    for (const c of cases) {
      const server = await serverVerdict(c);
      const ours = ourVerdict(c);
      const s = server.startsWith('invalid') ? 'invalid' : 'valid';
      counts[s]++;
      if (s !== (ours.startsWith('invalid') ? 'invalid' : 'valid')) mismatches.push(`${c.label}\n    server: ${server}\n    ours:   ${ours}`);
    }
    return { mismatches, counts };
  };

  it('on every binding-API example (create and update)', async () => {
    const cases = bindingCases();
    const { mismatches, counts } = await compare(cases);
    expect(mismatches).toEqual([]);
    expect(counts.valid).toBeGreaterThan(20);
    expect(counts.invalid).toBeGreaterThan(400);
  });

  it('on Klutch PostgreSQL claims against the derived claim CRD (create and update)', async () => {
    const { mismatches, counts } = await compare(claimCases());
    expect(mismatches).toEqual([]);
    expect(counts).toEqual({ valid: 3, invalid: 12 });
  });

  it('on CEL features: Kubernetes lists/regex libraries, int-or-string, set/map lists, list-map transitions', async () => {
    const { mismatches, counts } = await compare(probeCases());
    expect(mismatches).toEqual([]);
    expect(counts).toEqual({ valid: 4, invalid: 10 });
  });
});
