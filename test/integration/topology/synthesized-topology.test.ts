/**
 * Issue 3 item 5: the synthesized example topology on real API servers.
 *
 * 1. `npm run synth` (the real command, CDK8S_OUTDIR) into a temporary folder, not the repo's dist/;
 *    identical to an in-process synth of the same example, whose catalogue gives the sample claims.
 * 2. One real cluster (etcd + kube-apiserver + kube-controller-manager) per synthesized cluster
 *    folder: the control plane and both app clusters — their outputs differ (other claims, other
 *    bound APIs, same cluster-scoped names such as the konnector's ClusterRole), so sharing one API
 *    server would let one cluster's objects overwrite the other's.
 * 3. Each cluster folder is server-side applied object by object in the folder's own order (its
 *    kustomization.yaml: 00-crds, 10-namespaces, …), with strict field validation; every object
 *    must be accepted. Crossplane and the providers do not run, so their CRDs are installed first
 *    from the vendored upstream files (imports/crds/).
 * 4. The claim and XR CRDs of each generated XRD are derived with the shared helper of `klutch-kit
 *    validate` (deriveClaimCrd / deriveXrCrd), installed, and must become Established.
 * 5. Sample claims for every API of the catalogue (test/integration/topology/_claims.ts, verdicts
 *    derived from the catalogue model) are dry-run applied: valid ones accepted, invalid ones
 *    rejected by the API server's own schema + CEL evaluation, including update pairs (old object
 *    created for real, new one dry-run applied over it).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { exampleTopology } from '../../../constructs/app/example.js';
import { ClusterRole } from '../../../constructs/topology/index.js';
import { clientOf, startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { ApiError } from '../../../runtime/core/client.js';
import { ResourcePaths } from '../../../runtime/core/discovery.js';
import { applyInOrder, readClusterFolder, type FolderObject, type ObjectVerdict } from '../../../runtime/realinfra/topology-apply.js';
import { catalogueCorpus, parameterSamples, type ClaimCase } from './_claims.js';
import { SchemaValidator } from '../../../constructs/validate/index.js';
import {
  argoCdPrerequisites,
  claimApis,
  folderContents,
  notContained,
  platformCrds,
  rejectedLines,
  REPO_ROOT,
  runSynthCommand,
  synthExample,
  type ClaimApi,
  type SynthesizedExample,
} from './_support.js';

// The example topology, built once: synthesized in beforeAll, and its catalogue gives the sample claims.
const app = new App();
const topology = exampleTopology(app);
const catalogue = topology.controlPlane.catalogue;
if (!catalogue) throw new Error('the example topology has no catalogue; this suite checks the catalogue APIs');
const corpus = catalogueCorpus(catalogue);
const KINDS = [...corpus.keys()];

const CORPUS_NAMESPACE = 'claims-corpus';
const FIELD_MANAGER = 'klutch-kit-topology-test';

let outdir: string;
let inProcessDir: string;
let synth: SynthesizedExample;
const clusters = new Map<string, RealCluster>();
let apis: ClaimApi[] = [];
const applied = new Map<string, ObjectVerdict[]>();

function cluster(name: string): RealCluster {
  const c = clusters.get(name);
  if (!c) throw new Error(`cluster "${name}" is not running (did beforeAll fail?)`);
  return c;
}

function folder(name: string): FolderObject[] {
  return readClusterFolder(join(outdir, name));
}

type Verdict = { ok: boolean; status: number; message: string };

async function verdictOf(p: Promise<unknown>): Promise<Verdict> {
  try {
    await p;
    return { ok: true, status: 200, message: '' };
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, status: e.code, message: e.apiMessage };
    return { ok: false, status: 0, message: e instanceof Error ? e.message : String(e) };
  }
}

/** Server-side apply of one object with strict field validation; the API server's verdict. */
async function ssa(kc: KubeConfig, path: string, object: KubernetesObject, dryRun: boolean): Promise<Verdict> {
  const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, force: 'true', fieldValidation: 'Strict' });
  if (dryRun) q.set('dryRun', 'All');
  return verdictOf(clientOf(kc).request('PATCH', `${path}?${q.toString()}`, { body: object, contentType: 'application/apply-patch+yaml' }));
}

/** Dry-run create (POST, strict field validation) of one object into a collection path; the API server's verdict. */
async function dryRunCreate(kc: KubeConfig, collection: string, object: KubernetesObject): Promise<Verdict> {
  const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, fieldValidation: 'Strict', dryRun: 'All' });
  return verdictOf(clientOf(kc).request('POST', `${collection}?${q.toString()}`, { body: object }));
}

/** What was sent is what is stored: nothing pruned or changed (the API server only adds defaults and metadata). */
function changedLines(objects: readonly FolderObject[], verdicts: readonly ObjectVerdict[]): string[] {
  return objects.flatMap((o, i) => {
    const { metadata: sentMd, ...sent } = o.object as unknown as Record<string, any>;
    const { metadata: gotMd, ...got } = (verdicts[i]?.answer ?? {}) as unknown as Record<string, any>;
    const d =
      notContained(sent, got) ??
      notContained({ labels: sentMd?.labels, annotations: sentMd?.annotations }, { labels: gotMd?.labels, annotations: gotMd?.annotations }, '.metadata');
    return d ? [`${o.path}: ${d}`] : [];
  });
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

let commandOutput: string;

beforeAll(async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-topology-'));
  // The folders applied below are the output of `npm run synth` itself; the in-process synth of
  // the same example (whose catalogue gives the sample claims) must be identical to it.
  outdir = join(tmp, 'dist');
  inProcessDir = join(tmp, 'in-process');
  synth = await synthExample(inProcessDir, app, topology);
  // One real cluster per synthesized cluster folder, started side by side (and with the command).
  const [command, ...started] = await Promise.allSettled([runSynthCommand(outdir), ...synth.result.clusters.map((c) => startCluster({ name: c.name }))]);
  for (const s of started) if (s.status === 'fulfilled') clusters.set((s.value as RealCluster).name, s.value as RealCluster);
  if (command.status === 'rejected')
    throw new Error(`npm run synth (CDK8S_OUTDIR=${outdir}) failed: ${(command.reason as { stderr?: string }).stderr ?? command.reason}`);
  commandOutput = command.value as string;
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}, 240_000);

afterAll(async () => {
  await Promise.all([...clusters.values()].map((c) => c.stop()));
  if (outdir) rmSync(resolve(outdir, '..'), { recursive: true, force: true });
}, 60_000);

describe('synth of the example topology', () => {
  it('npm run synth writes one folder per cluster into a temporary folder (not the repo dist/), identical to the in-process synth', () => {
    expect(commandOutput).toMatch(/wrote \d+ objects to .* \(validated\)/);
    const fromCommand = folderContents(outdir);
    const inProcess = folderContents(inProcessDir);
    expect([...fromCommand.keys()]).toEqual([...inProcess.keys()]);
    expect([...fromCommand.entries()].filter(([f, text]) => inProcess.get(f) !== text).map(([f]) => f)).toEqual([]);
    expect(resolve(outdir).startsWith(resolve(REPO_ROOT))).toBe(false);
    expect(synth.result.clusters.map((c) => `${c.name} (${c.role})`)).toEqual(['app-analytics (app)', 'app-shop (app)', 'control-plane (control-plane)']);
    expect(readdirSync(outdir).sort()).toEqual(['app-analytics', 'app-shop', 'control-plane']);
    for (const c of synth.result.clusters) expect(folder(c.name)).toHaveLength(c.objects);
    expect(synth.target).toBe('2');
  });
});

describe('control plane: every synthesized object accepted', () => {
  it('accepts the platform CRDs (Crossplane core, provider-kubernetes, provider-anynines) and the Argo CD prerequisites', async () => {
    const kc = cluster('control-plane').kubeConfig;
    const crds = platformCrds(synth.target);
    const v = await applyInOrder(
      kc,
      [...crds.map((c) => ({ path: c.file, object: c.object })), ...argoCdPrerequisites(folder('control-plane').map((o) => o.object))],
      { fieldManager: FIELD_MANAGER },
    );
    expect(rejectedLines(v)).toEqual([]);
    expect(v.length).toBeGreaterThanOrEqual(20);
  }, 120_000);

  it('accepts every object of control-plane/ by server-side apply in the folder order, with strict field validation', async () => {
    const kc = cluster('control-plane').kubeConfig;
    const objects = folder('control-plane');
    const v = await applyInOrder(kc, objects, { fieldManager: FIELD_MANAGER });
    applied.set('control-plane', v);
    expect(rejectedLines(v)).toEqual([]);
    expect(v).toHaveLength(objects.length);
    // The folder order is a dependency order: CRDs, namespaces, RBAC, config, … custom resources last.
    const phases = objects.map((o) => o.path.split('/')[0]);
    expect([...phases].sort()).toEqual(phases);
    expect(changedLines(objects, v)).toEqual([]);
  }, 120_000);

  it('every object can be read back, including the Crossplane, provider, binding-API and Argo CD kinds', async () => {
    const kc = cluster('control-plane').kubeConfig;
    const objects = folder('control-plane');
    const kinds = [...new Set(objects.map((o) => `${o.object.apiVersion} ${o.object.kind}`))].sort();
    expect(kinds).toEqual(
      expect.arrayContaining([
        'apiextensions.crossplane.io/v1 CompositeResourceDefinition',
        'apiextensions.crossplane.io/v1 Composition',
        'pkg.crossplane.io/v1 Provider',
        'pkg.crossplane.io/v1 Function',
        'dataservices.anynines.com/v1 ProviderConfig',
        'example-backend.klutch.anynines.com/v1alpha1 APIServiceExportTemplate',
        'argoproj.io/v1alpha1 Application',
      ]),
    );
    // Each object can be read back, with the identity the apply answered.
    const paths = new ResourcePaths(clientOf(kc));
    const v = applied.get('control-plane') ?? [];
    expect(v).toHaveLength(objects.length);
    const problems = await pool(objects, 6, async (o, i) => {
      const got = await clientOf(kc).request<KubernetesObject>('GET', await paths.objectPath(o.object as never));
      return got.metadata?.uid && got.metadata.uid === v[i].answer?.metadata?.uid
        ? undefined
        : `${o.path}: read back uid ${got.metadata?.uid}, apply answered ${v[i].answer?.metadata?.uid}`;
    });
    expect(problems.filter((p) => p !== undefined)).toEqual([]);
  }, 60_000);

  it('derives the claim and XR CRD of every generated XRD with the shared helper; the API server establishes them', async () => {
    const kc = cluster('control-plane').kubeConfig;
    apis = claimApis(
      folder('control-plane').map((o) => o.object),
      synth.target,
    );
    expect(apis.map((a) => a.claimKind).sort()).toEqual([...KINDS].sort());
    const crds = apis.flatMap((a) => [a.claim, a.xr]) as unknown as KubernetesObject[];
    const v = await applyInOrder(kc, [...crds, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CORPUS_NAMESPACE } }], { fieldManager: FIELD_MANAGER });
    expect(rejectedLines(v)).toEqual([]);
    // Established (applyInOrder waited for it) and serving: the claim kinds are in discovery.
    const discovery = await clientOf(kc).request<{ resources: Array<{ kind: string; namespaced: boolean }> }>('GET', '/apis/anynines.com/v1');
    for (const a of apis) {
      expect(discovery.resources.find((r) => r.kind === a.claimKind)).toMatchObject({ namespaced: true });
      expect(discovery.resources.find((r) => r.kind === a.xrKind)).toMatchObject({ namespaced: false });
    }
    for (const crd of crds) {
      const got = await clientOf(kc).request<{ status: { conditions: Array<{ type: string; status: string }> } }>(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name}`,
      );
      expect({ crd: crd.metadata!.name, established: got.status.conditions.find((c) => c.type === 'Established')?.status }).toEqual({
        crd: crd.metadata!.name,
        established: 'True',
      });
    }
  }, 120_000);
});

/** The API server's answer to one claim case, by one verb. */
interface Outcome extends Verdict {
  readonly c: ClaimCase;
  readonly verb: 'apply' | 'create';
}

/**
 * Undefined when the outcome is the expected verdict, else a readable mismatch. A rejection must
 * be a 422 Invalid naming the expected field or rule — except one documented Kubernetes quirk:
 * server-side apply converts the patch to a typed object against the CRD's structural schema
 * before validation, and a field of the wrong type or not in the schema fails that conversion with
 * HTTP 500 "failed to create typed patch object (…): .spec.x: …" (kubernetes/kubernetes#139253,
 * fix to 400 proposed in #139255). That is still the API server's own schema rejecting the field;
 * the same claim sent as a create (POST) must then get the regular 422. An undeclared field sent
 * as a create is refused by strict decoding (400 "strict decoding error: unknown field").
 */
function mismatch(o: Outcome): string | undefined {
  const id = `${o.c.id} [${o.verb}]`;
  if (o.c.accept && o.ok) return undefined;
  if (o.c.accept) return `${id}: expected accepted, got ${o.status} ${o.message}`;
  if (o.ok) return `${id}: expected rejected (${o.c.expect}), but the API server accepted it`;
  const typedPatch = o.verb === 'apply' && (o.status === 500 || o.status === 400) && o.message.startsWith('failed to create typed patch object');
  // fieldValidation=Strict refuses undeclared fields while decoding, before validation: 400 BadRequest.
  const strictDecoding = o.c.tag === 'create-unknown-field' && o.status === 400 && o.message.includes('strict decoding error');
  if (o.status !== 422 && !typedPatch && !strictDecoding) return `${id}: expected 422 Invalid (${o.c.expect}), got ${o.status} ${o.message}`;
  if (o.c.expect && !o.message.includes(o.c.expect)) return `${id}: rejected, but the message lacks "${o.c.expect}": ${o.message}`;
  return undefined;
}

describe.each(KINDS)('catalogue API %s: sample claims on the real API server', (kind) => {
  const kc = () => cluster('control-plane').kubeConfig;
  const api = () => {
    const a = apis.find((x) => x.claimKind === kind);
    if (!a) throw new Error(`no derived claim CRD for ${kind} (did the derivation test fail?)`);
    return a;
  };
  const claimPath = (name: string) => `/apis/${api().group}/${api().version}/namespaces/${CORPUS_NAMESPACE}/${api().claimPlural}/${name}`;
  const claim = (name: string, spec: Record<string, unknown>): KubernetesObject =>
    ({
      apiVersion: `${api().group}/${api().version}`,
      kind,
      metadata: { name, namespace: CORPUS_NAMESPACE },
      spec,
    }) as KubernetesObject;
  const cases = corpus.get(kind)!.cases;
  const slug = kind.toLowerCase();

  it(`creates: valid claims accepted, invalid ones rejected by schema and CEL (${cases.filter((c) => !c.old).length} claims; dry-run apply and dry-run create)`, async () => {
    const creates = cases.filter((c) => !c.old);
    const collection = claimPath('').replace(/\/$/, '');
    const outcomes = (
      await pool(creates, 6, async (c, i) => {
        const obj = claim(`${slug}-c${i}`, c.spec);
        return [
          { c, verb: 'apply' as const, ...(await ssa(kc(), claimPath(`${slug}-c${i}`), obj, true)) },
          { c, verb: 'create' as const, ...(await dryRunCreate(kc(), collection, obj)) },
        ];
      })
    ).flat();
    expect(outcomes.map(mismatch).filter((m) => m !== undefined)).toEqual([]);
    // Nothing was stored.
    const list = await clientOf(kc()).request<{ items: unknown[] }>('GET', collection);
    expect(list.items).toEqual([]);
    expect(creates.some((c) => c.accept)).toBe(true);
    expect(creates.some((c) => !c.accept)).toBe(true);
  }, 120_000);

  it(`update pairs: old claim created for real, new one dry-run applied over it (${cases.filter((c) => c.old).length} pairs)`, async () => {
    const pairs = cases.filter((c) => c.old);
    // One real object per distinct old spec.
    const olds = [...new Map(pairs.map((c) => [JSON.stringify(c.old), c.old!])).values()];
    const nameOf = new Map(olds.map((o, i) => [JSON.stringify(o), `${slug}-old${i}`]));
    const created = await pool(olds, 4, async (o) => {
      const name = nameOf.get(JSON.stringify(o))!;
      return { name, ...(await ssa(kc(), claimPath(name), claim(name, o), false)) };
    });
    expect(created.filter((r) => !r.ok).map((r) => `${r.name}: ${r.status} ${r.message}`)).toEqual([]);
    const outcomes = await pool(pairs, 6, async (c) => {
      const name = nameOf.get(JSON.stringify(c.old))!;
      return { c, verb: 'apply' as const, ...(await ssa(kc(), claimPath(name), claim(name, c.spec), true)) };
    });
    expect(outcomes.map(mismatch).filter((m) => m !== undefined)).toEqual([]);
    // The dry runs changed nothing: every old object still has its old spec.
    const stored = await pool(olds, 6, async (o) => {
      const name = nameOf.get(JSON.stringify(o))!;
      const got = await clientOf(kc()).request<{ spec: Record<string, unknown> }>('GET', claimPath(name));
      const d = notContained(o, got.spec);
      return d && `${name}: ${d}`;
    });
    expect(stored.filter((s) => s !== undefined)).toEqual([]);
  }, 150_000);

  it('the composite resource (XR) CRD: a valid spec accepted, an invalid one rejected (dry run)', async () => {
    const a = api();
    const xr = (spec: Record<string, unknown>): KubernetesObject =>
      ({ apiVersion: `${a.group}/${a.version}`, kind: a.xrKind, metadata: { name: `${slug}-xr` }, spec }) as KubernetesObject;
    const xrPath = `/apis/${a.group}/${a.version}/${a.xr.spec.names.plural}/${slug}-xr`;
    const good = await ssa(kc(), xrPath, xr(corpus.get(kind)!.validSpec), true);
    expect({ kind: a.xrKind, ...good }).toEqual({ kind: a.xrKind, ok: true, status: 200, message: '' });
    const invalid = cases.find((c) => !c.old && c.tag === 'create-enum')!;
    const bad = await ssa(kc(), xrPath, xr(invalid.spec), true);
    expect(mismatch({ c: invalid, verb: 'apply', ...bad })).toBeUndefined();
  });
});

const DATA_SERVICE_KINDS = [...catalogue.services.values()].map((ds) => [ds.model.claimKind, ds] as const);

describe.each(DATA_SERVICE_KINDS)('catalogue API %s: klutch-kit validate and the API server agree', (kind, ds) => {
  const sampled = parameterSamples(ds);

  it(`on every parameter sample (${sampled.length} claims: valid and invalid values of every parameter, dry-run create)`, async () => {
    const kc = cluster('control-plane').kubeConfig;
    const a = apis.find((x) => x.claimKind === kind);
    if (!a) throw new Error(`no derived claim CRD for ${kind} (did the derivation test fail?)`);
    // The offline validator of `klutch-kit validate`, on the very claim CRD installed in the cluster.
    const version = a.claim.spec.versions.find((v) => v.name === a.version)!;
    const offline = new SchemaValidator(version.schema!.openAPIV3Schema!);
    const collection = `/apis/${a.group}/${a.version}/namespaces/${CORPUS_NAMESPACE}/${a.claimPlural}`;
    const slug = `${kind.toLowerCase()}-p`;
    let accepted = 0;
    const disagreements = await pool(sampled, 6, async (c, i) => {
      const obj = {
        apiVersion: `${a.group}/${a.version}`,
        kind,
        metadata: { name: `${slug}${i}`, namespace: CORPUS_NAMESPACE },
        spec: c.spec,
      } as KubernetesObject;
      const server = await dryRunCreate(kc, collection, obj);
      if (server.ok) accepted++;
      const local = offline.validate(obj);
      if (server.ok === (local.length === 0)) return undefined;
      return `${c.id}: API server ${server.ok ? 'accepts' : `rejects (${server.status} ${server.message})`}, klutch-kit validate ${local.length === 0 ? 'accepts' : `rejects (${local.map((e) => `${e.path}: ${e.message}`).join('; ')})`}`;
    });
    expect(disagreements.filter((d) => d !== undefined)).toEqual([]);
    // The samples hold both verdicts.
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(sampled.length);
  }, 120_000);
});

describe('the corpus covers what issue 3 asks for', () => {
  it('every catalogue API has valid and invalid creates and update pairs; every data service has a plan upgrade accepted (where one exists), a downgrade or frozen plan rejected, and a service change rejected', () => {
    const tags = (k: string) => new Set(corpus.get(k)!.cases.map((c) => c.tag));
    for (const ds of catalogue.services.values()) {
      const t = tags(ds.model.claimKind);
      const plans = ds.model.plans;
      const upgradable = plans.names.some((a) => plans.names.some((b) => plans.isUpgrade(a, b)));
      // LogMe2 has one size only: no upgrade exists, its plan changes are topology changes (rejected).
      const planRejected =
        ['update-downgrade', 'update-plan-frozen', 'update-scale-in', 'update-scale-out-forbidden', 'update-flag-flip'].some((x) => t.has(x)) &&
        (!upgradable || t.has('update-downgrade') || t.has('update-plan-frozen'));
      const planAccepted = upgradable ? t.has('update-upgrade') || t.has('update-plan-frozen') : t.has('update-same-plan');
      const serviceRejected = t.has('update-service-change') || t.has('update-service-unknown');
      expect({ kind: ds.model.claimKind, planAccepted, planRejected, serviceRejected }).toEqual({
        kind: ds.model.claimKind,
        planAccepted: true,
        planRejected: true,
        serviceRejected: true,
      });
    }
    for (const k of KINDS) {
      const t = tags(k);
      expect({
        k,
        valid: t.has('create-valid'),
        enum: t.has('create-enum'),
        required: t.has('create-required'),
        updates: [...t].some((x) => x.startsWith('update-')),
      }).toEqual({ k, valid: true, enum: true, required: true, updates: true });
    }
    expect(KINDS).toHaveLength(catalogue.services.size + catalogue.operations.size);
  });
});

describe.each(['app-shop', 'app-analytics'])('app cluster %s: every synthesized object accepted', (name) => {
  const appCluster = () => {
    const a = topology.appClusters.find((x) => x.clusterName === name);
    if (!a || a.clusterRole !== ClusterRole.APP) throw new Error(`no app cluster ${name} in the example topology`);
    return a;
  };

  it('gets the claim CRDs of the APIs it binds (as the konnector installs them), then accepts every object of its folder in order (a reversed order is refused)', async () => {
    const kc = cluster(name).kubeConfig;
    const bound = new Set(appCluster().boundApis.map((b) => b.name));
    const crds = apis.filter((a) => bound.has(`${a.claimPlural}.${a.group}`)).map((a) => a.claim as unknown as KubernetesObject);
    expect(crds).toHaveLength(bound.size);
    const pre = await applyInOrder(kc, crds, { fieldManager: FIELD_MANAGER });
    expect(rejectedLines(pre)).toEqual([]);
    const objects = folder(name);
    // The order matters (so applying in it proves something): dry-run in reverse order, the claims
    // come before their namespaces and the APIServiceBindings before their CRD, and are refused.
    const reversed = await applyInOrder(kc, [...objects].reverse(), { fieldManager: FIELD_MANAGER, dryRun: true, discoveryGraceMs: 0 });
    const refused = reversed.filter((x) => !x.ok);
    expect(refused.filter((x) => x.ref.startsWith('APIServiceBinding/')).length).toBe(objects.filter((o) => o.object.kind === 'APIServiceBinding').length);
    expect(refused.filter((x) => x.status === 404 && /namespaces? "[a-z0-9-]+" not found/.test(x.message)).length).toBeGreaterThan(0);
    const v = await applyInOrder(kc, objects, { fieldManager: FIELD_MANAGER });
    expect(rejectedLines(v)).toEqual([]);
    expect(v).toHaveLength(objects.length);
    expect(changedLines(objects, v)).toEqual([]);
    // The claims are stored as written, in their namespaces.
    const claims = objects.filter((o) => o.object.apiVersion?.startsWith('anynines.com/'));
    expect(claims.length).toBeGreaterThan(0);
    const drift: string[] = [];
    for (const c of claims) {
      const a = apis.find((x) => x.claimKind === c.object.kind)!;
      const got = await clientOf(kc).request<{ spec: Record<string, unknown> }>(
        'GET',
        `/apis/${a.group}/${a.version}/namespaces/${c.object.metadata!.namespace}/${a.claimPlural}/${c.object.metadata!.name}`,
      );
      const d = notContained((c.object as unknown as { spec: unknown }).spec, got.spec, 'spec');
      if (d) drift.push(`${c.path}: ${d}`);
    }
    expect(drift).toEqual([]);
  }, 120_000);

  it('serves only the claim APIs it binds', async () => {
    const kc = cluster(name).kubeConfig;
    const bound = new Set(appCluster().boundApis.map((b) => b.resource));
    const discovery = await clientOf(kc).request<{ resources: Array<{ name: string }> }>('GET', '/apis/anynines.com/v1');
    expect(
      discovery.resources
        .map((r) => r.name)
        .filter((r) => !r.includes('/'))
        .sort(),
    ).toEqual([...bound].sort());
  });
});
