/**
 * The offline validator (constructs/validate) against a real kube-apiserver: every example object
 * of the binding-API compatibility corpus (test/api/_examples.ts: generated bases, single-field
 * mutations, CEL cases, update pairs) and a set of Klutch PostgreSQL claims (derived claim CRD,
 * incl. update pairs), plus probe CRDs for CEL features and the Kubernetes quantity/url/ip/cidr/format
 * libraries, is sent to the API server as a dry run with strict field validation, and
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
import { bindingCrds, bindingKinds, type JSONSchemaProps } from '../../../contract/api/index.js';
import { deriveClaimCrd, SchemaValidator, type CompositeResourceDefinitionLike } from '../../../constructs/validate/index.js';
import { apiErrorDetails, applyManifests, type RealCluster } from '../../../runtime/realinfra/index.js';
import { uniqueName, useCluster } from '../../realinfra/util.js';
import { baseObject, celCases, mutations, type Example } from '../../api/_examples.js';

jest.setTimeout(600_000);

const here = fileURLToPath(new URL('.', import.meta.url));
const pgXrd = parse(
  readFileSync(join(here, '..', '..', 'fixtures', 'klutch', 'xp-common-postgresql_definition.yaml'), 'utf8'),
) as CompositeResourceDefinitionLike;
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
    throw new Error(`${c.label}: unexpected API server answer ${d.status}: ${d.message}`, { cause: e });
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
      out.push({
        label: `${k.kind}: ${ex.label}`,
        group: k.group,
        version: k.version,
        plural: k.plural,
        schema,
        obj: ex.obj as Record<string, unknown>,
        old: ex.old as Record<string, unknown> | undefined,
      });
    };
    for (const full of [false, true]) {
      const base = baseObject(k, schema, full);
      add({ label: `${full ? 'full' : 'minimal'} base`, obj: base });
      for (const m of mutations(schema, base)) add(m);
    }
  }
  for (const { kind, ex } of celCases()) {
    if (ex.old && (ex.old as { metadata: { name: string } }).metadata.name !== (ex.obj as { metadata: { name: string } }).metadata.name) continue;
    out.push({
      label: `${kind.kind}: ${ex.label}`,
      group: kind.group,
      version: kind.version,
      plural: kind.plural,
      schema: kind.openAPIV3Schema(),
      obj: ex.obj as Record<string, unknown>,
      old: ex.old as Record<string, unknown> | undefined,
    });
  }
  return out;
}

function claimCases(): Case[] {
  const schema = claimCrd.spec.versions[0].schema.openAPIV3Schema;
  const claim = (spec: Record<string, unknown>, name = 'db') => ({ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', metadata: { name }, spec });
  const a9s = { service: 'a9s-postgresql13', plan: 'postgresql-single-small', compositionRef: { name: 'a9s-postgresql' } };
  const c = (label: string, obj: Record<string, unknown>, old?: Record<string, unknown>): Case => ({
    label: `PostgresqlInstance: ${label}`,
    group: 'anynines.com',
    version: 'v1',
    plural: 'postgresqlinstances',
    schema,
    obj,
    old,
  });
  return [
    c('valid a9s claim', claim(a9s)),
    c(
      'valid a8s claim with connection secret',
      claim({
        service: 'a9s-postgresql14',
        plan: 'postgresql-replica-medium',
        compositionRef: { name: 'a8s-postgresql' },
        writeConnectionSecretToRef: { name: 'db-creds' },
      }),
    ),
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
        image: {
          type: 'string',
          maxLength: 100,
          'x-kubernetes-validations': [{ rule: "self.find('[0-9]+$') != '' && size(self.findAll('[a-z]+')) == 2", message: 'registry/name:version' }],
        },
        size: {
          anyOf: [{ type: 'integer' }, { type: 'string' }],
          'x-kubernetes-int-or-string': true,
          'x-kubernetes-validations': [{ rule: "type(self) == string ? self == 'auto' : self >= 1", messageExpression: "'size must be auto or >= 1'" }],
        },
        plans: {
          type: 'array',
          maxItems: 10,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', maxLength: 20 },
              replicas: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'no scaling down' }] },
            },
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
  const c = (label: string, obj: Record<string, unknown>, old?: Record<string, unknown>): Case => ({
    label: `Probe: ${label}`,
    group: PROBE_GROUP,
    version: 'v1',
    plural: 'probes',
    schema: probeSchema,
    obj,
    old,
  });
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
    c(
      'scale up',
      probe({
        plans: [
          { name: 'q', replicas: 1 },
          { name: 'p', replicas: 3 },
        ],
      }),
      probe({ plans: [{ name: 'p', replicas: 2 }] }),
    ),
    c(
      'scale down (item moved)',
      probe({
        plans: [
          { name: 'q', replicas: 5 },
          { name: 'p', replicas: 1 },
        ],
      }),
      probe({ plans: [{ name: 'p', replicas: 2 }] }),
    ),
  ];
}

/** A CRD exercising the Kubernetes quantity, url, ip, cidr and format CEL libraries. */
const libSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        q: { type: 'string', maxLength: 64, 'x-kubernetes-validations': [{ rule: 'isQuantity(self)', message: 'not a quantity' }] },
        storage: {
          type: 'string',
          maxLength: 64,
          'x-kubernetes-validations': [{ rule: "quantity(self).compareTo(quantity('1Gi')) >= 0", message: 'at least 1Gi' }],
        },
        whole: {
          type: 'string',
          maxLength: 64,
          'x-kubernetes-validations': [{ rule: 'quantity(self).isInteger() && quantity(self).asInteger() < 100000', message: 'small integer' }],
        },
        cpu: {
          type: 'string',
          maxLength: 64,
          'x-kubernetes-validations': [{ rule: "quantity(self).add(quantity('500m')).isLessThan(quantity('2'))", message: 'cpu + 500m < 2' }],
        },
        endpoint: { type: 'string', maxLength: 128, 'x-kubernetes-validations': [{ rule: "self == '' || isURL(self)", message: 'not a URL' }] },
        https: {
          type: 'string',
          maxLength: 128,
          'x-kubernetes-validations': [
            {
              rule: "url(self).getScheme() == 'https' && url(self).getPort() != '' && url(self).getEscapedPath().startsWith('/api')",
              message: 'https with port and /api',
            },
          ],
        },
        query: {
          type: 'string',
          maxLength: 128,
          'x-kubernetes-validations': [{ rule: "'x' in url(self).getQuery() && size(url(self).getQuery()['x']) == 2", message: 'two x params' }],
        },
        ip: {
          type: 'string',
          maxLength: 64,
          'x-kubernetes-validations': [{ rule: 'isIP(self) && ip.isCanonical(self) && ip(self).isGlobalUnicast()', message: 'canonical global unicast IP' }],
        },
        ip6: {
          type: 'string',
          maxLength: 64,
          'x-kubernetes-validations': [{ rule: "ip(self).family() == 6 && string(ip(self)) == '2001:db8::1'", message: 'the IPv6 2001:db8::1' }],
        },
        net: {
          type: 'object',
          required: ['range', 'gateway'],
          properties: { range: { type: 'string', maxLength: 64 }, gateway: { type: 'string', maxLength: 64 } },
          'x-kubernetes-validations': [
            { rule: 'cidr(self.range).containsIP(self.gateway)', message: 'gateway outside range' },
            { rule: 'cidr(self.range) == cidr(self.range).masked()', message: 'range not masked' },
            {
              rule: "cidr('10.0.0.0/8').containsCIDR(self.range) || !isCIDR(self.range) || cidr(self.range).ip().family() == 6",
              message: 'IPv4 ranges within 10/8',
            },
          ],
        },
        name: {
          type: 'string',
          maxLength: 253,
          'x-kubernetes-validations': [
            { rule: '!format.dns1123Label().validate(self).hasValue()', messageExpression: 'format.dns1123Label().validate(self).value()[0]' },
          ],
        },
        fmt: {
          type: 'object',
          required: ['name', 'value'],
          properties: { name: { type: 'string', maxLength: 32 }, value: { type: 'string', maxLength: 64 } },
          'x-kubernetes-validations': [
            {
              rule: 'format.named(self.name).hasValue() && !format.named(self.name).value().validate(self.value).hasValue()',
              message: 'invalid for the format',
            },
          ],
        },
      },
    },
  },
};

function libCases(): Case[] {
  const lib = (spec: Record<string, unknown>) => ({ apiVersion: `${PROBE_GROUP}/v1`, kind: 'LibProbe', metadata: { name: 'l' }, spec });
  const c = (label: string, spec: Record<string, unknown>): Case => ({
    label: `LibProbe: ${label}`,
    group: PROBE_GROUP,
    version: 'v1',
    plural: 'libprobes',
    schema: libSchema,
    obj: lib(spec),
  });
  const fmt = (name: string, value: string) => ({ fmt: { name, value } });
  return [
    ...['1.5G', '200k', '-1.5Mi', '1e3', '1E-3', '.', '+', 'Mi', '.5', '1.', '200K', 'Three', '1,3G', '.5i', '1Mi3', '0.1n', ' 1'].map((q) =>
      c(`isQuantity ${JSON.stringify(q)}`, { q }),
    ),
    ...['2Gi', '1024Mi', '1Gi', '1G', '1073741824', '1073741823', '1.5Gi', '0.001Ti', 'x'].map((storage) => c(`storage ${storage}`, { storage })),
    ...['50k', '99999', '100k', '1000m', '1500m', '1.0', '1e3', '1.5Gi', '12345678901234567890'].map((whole) => c(`integer ${whole}`, { whole })),
    ...['1', '1499m', '1500m', '1.4999999999', '-5'].map((cpu) => c(`cpu ${cpu}`, { cpu })),
    ...[
      '',
      'https://db.example.com:5432/app',
      '/absolute',
      'db.example.com',
      'db.example.com:5432',
      '../rel',
      'https://a:b:c/',
      'http://a:b:80/',
      'http://[::1]:80/',
      'http://[1.2.3.4]/',
      'https://x/%zz',
      'https://exa mple.com/',
      'http://u@x/',
      'http://u v@x/',
      '*',
      'mailto:x@y',
    ].map((endpoint) => c(`isURL ${JSON.stringify(endpoint)}`, { endpoint })),
    ...['https://x:8443/api/v1', 'https://x/api', 'http://x:80/api', 'https://x:8443/other', 'https://[::1]:1/api?x#y', 'https://x:8443/api%2Fv1', 'nope'].map(
      (https) => c(`https ${https}`, { https }),
    ),
    ...['https://x/?x=1&x=2', 'https://x/?x=1&y=2', 'https://x/?x=1;x=2&x=3', 'https://x/?x=%zz&x=1&x=2', 'https://x/?x&x=+'].map((query) =>
      c(`query ${query}`, { query }),
    ),
    ...[
      '8.8.8.8',
      '10.0.0.1',
      '127.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '2001:db8::1',
      '2001:DB8::1',
      '2001:db8:0:0:0:0:0:1',
      '01.2.3.4',
      '::ffff:1.2.3.4',
      'fe80::1',
      'fe80::1%eth0',
      '224.0.0.1',
    ].map((ip) => c(`ip ${ip}`, { ip })),
    ...['2001:db8::1', '2001:0db8:0::1', '10.0.0.1', '2001:db8::2'].map((ip6) => c(`ip6 ${ip6}`, { ip6 })),
    ...[
      ['10.1.0.0/16', '10.1.2.3'],
      ['10.1.0.0/16', '10.2.0.1'],
      ['10.1.0.1/16', '10.1.2.3'],
      ['192.168.0.0/24', '192.168.0.1'],
      ['2001:db8::/32', '2001:db8::1'],
      ['2001:db8::/32', '10.0.0.1'],
      ['10.0.0.0/33', '10.0.0.1'],
      ['10.0.0.0/8', '10.0.0.256'],
      ['10.0.0.0/08', '10.0.0.1'],
    ].map(([range, gateway]) => c(`cidr ${range} ${gateway}`, { net: { range, gateway } })),
    ...['db-1', 'Db', 'a.b', 'x'.repeat(64), '-x'].map((name) => c(`dns1123Label ${name.slice(0, 10)}`, { name })),
    c('format dns1123Subdomain ok', fmt('dns1123Subdomain', 'a.b.c')),
    c('format dns1123Subdomain bad', fmt('dns1123Subdomain', 'a..b')),
    c('format dns1035Label bad', fmt('dns1035Label', '1abc')),
    c('format qualifiedName ok', fmt('qualifiedName', 'example.com/MyName')),
    c('format qualifiedName bad', fmt('qualifiedName', 'a/b/c')),
    c('format dns1123LabelPrefix ok', fmt('dns1123LabelPrefix', 'my-prefix-')),
    c('format dns1035LabelPrefix "1-" (masked to "a")', fmt('dns1035LabelPrefix', '1-')),
    c('format labelValue empty', fmt('labelValue', '')),
    c('format labelValue bad', fmt('labelValue', 'a b')),
    c('format uri ok', fmt('uri', 'https://example.com/x')),
    c('format uri bad', fmt('uri', 'example.com')),
    c('format uuid ok', fmt('uuid', '123E4567E89B12D3A456426614174000')),
    c('format uuid bad', fmt('uuid', '123e4567-e89b-12d3-a456')),
    c('format byte ok', fmt('byte', 'aGVsbG8=')),
    c('format byte bad', fmt('byte', 'aGVsbG8')),
    c('format date ok', fmt('date', '2024-02-29')),
    c('format date bad', fmt('date', '2023-02-29')),
    c('format datetime ok', fmt('datetime', '2021-01-01t10:20:30.5+02:00')),
    c('format datetime bad', fmt('datetime', '2021-01-01T24:00:00Z')),
    c('format unknown', fmt('nope', 'x')),
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
      spec: {
        group: PROBE_GROUP,
        scope: 'Namespaced',
        names: { kind: 'Probe', plural: 'probes' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: probeSchema } }],
      },
    } as unknown as KubernetesObject,
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `libprobes.${PROBE_GROUP}` },
      spec: {
        group: PROBE_GROUP,
        scope: 'Namespaced',
        names: { kind: 'LibProbe', plural: 'libprobes' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: libSchema } }],
      },
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

  it('on the Kubernetes quantity, url, ip, cidr and format CEL libraries', async () => {
    const { mismatches, counts } = await compare(libCases());
    expect(mismatches).toEqual([]);
    expect(counts).toEqual({ valid: 56, invalid: 63 });
  });
});
