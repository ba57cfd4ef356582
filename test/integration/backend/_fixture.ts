// Shared setup of the backend suites: a real provider cluster with the binding CRDs, a data-service
// CRD offered by an APIServiceExportTemplate, a real OIDC provider on loopback, and the backend.
import { randomBytes } from 'node:crypto';
import { bindingCrds } from '../../../contract/api/index.js';
import { KubeClient, silentLogger, type KubeObject } from '../../../runtime/core/index.js';
import { applyManifests, startCluster, waitForCrdsEstablished, type RealCluster } from '../../../runtime/realinfra/index.js';
import { startBackend, type Backend } from '../../../runtime/backend/app.js';
import { parseBackendOptions } from '../../../runtime/backend/options.js';
import { FetchBrowser, OidcTestProvider, type TestUser } from '../../support/oidc-provider.js';
import { decodeBindingResponse, type BindingResponse } from '../../../contract/wire.js';

export const CLIENT_ID = 'klutch-backend';
export const CLIENT_SECRET = 'backend-secret-' + randomBytes(6).toString('hex');
export const MACHINE_ID = 'ci-pipeline';
export const MACHINE_SECRET = 'machine-secret-' + randomBytes(6).toString('hex');
export const BACKEND_RESOURCE = 'urn:klutch:backend';
export const USERS: TestUser[] = [
  { username: 'alice', password: 'alice-pw-' + randomBytes(4).toString('hex'), sub: 'user-alice', email: 'alice@example.test' },
  { username: 'bob', password: 'bob-pw-' + randomBytes(4).toString('hex'), sub: 'user-bob', email: 'bob@example.test' },
];

/** Klutch's example CRD (bind/deploy/examples/crd-mangodb.yaml), same group, names and schema shape. */
export const mangoCrd = (): KubeObject =>
  ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'mangodbs.mangodb.com', labels: { 'klutch.anynines.com/exported': 'true' } },
    spec: {
      group: 'mangodb.com',
      names: { kind: 'MangoDB', listKind: 'MangoDBList', plural: 'mangodbs', singular: 'mangodb' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { tier: { type: 'string', enum: ['Dedicated', 'Shared'], default: 'Shared' }, tokenSecret: { type: 'string' } },
                },
                status: { type: 'object', properties: { phase: { type: 'string' } } },
              },
            },
          },
          subresources: { status: {} },
        },
      ],
    },
  }) as KubeObject;

/** A second data-service CRD with two versions, status subresource and printer columns. */
export function widgetCrd(extraColumn = false): KubeObject {
  const schema = {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { size: { type: 'integer' } } },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  };
  const cols = [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    ...(extraColumn ? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }] : []),
  ];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.klutch.test' },
    spec: {
      group: 'example.klutch.test',
      names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, subresources: { status: {} }, additionalPrinterColumns: cols },
        { name: 'v1beta1', served: false, storage: false, schema: { openAPIV3Schema: schema } },
      ],
    },
  } as KubeObject;
}

/** A namespaced CRD `<plural>.<group>`, version v1, whose objects may hold anything. */
export const openCrd = (group: string, plural: string, kind: string): KubeObject =>
  ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  }) as KubeObject;

export const template = (name: string, group: string, resource: string, claims: unknown[] = []): KubeObject =>
  ({
    apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportTemplate',
    metadata: { name, namespace: 'crossplane-system' },
    spec: { APIServiceSelector: { group, resource }, permissionClaims: claims },
  }) as KubeObject;

export const SECRETS_CLAIM = { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } };

export interface ProviderEnv {
  cluster: RealCluster;
  kube: KubeClient;
  op: OidcTestProvider;
  backend: Backend;
  stop(): Promise<void>;
}

/** Starts cluster + OP + backend. `extraArgs` are backend flags. */
export async function startProvider(
  name: string,
  extraArgs: string[] = [],
  opts: { controllers?: boolean; /** more redirect URIs of the backend's client at the issuer (e.g. a proxy's /callback) */ redirectUris?: string[] } = {},
): Promise<ProviderEnv> {
  const cluster = await startCluster({ name });
  const stops: Array<() => Promise<void>> = [() => cluster.stop()];
  try {
    const crds = bindingCrds() as unknown as KubeObject[];
    await applyManifests(cluster.kubeConfig, [
      ...(crds as never[]),
      mangoCrd() as never,
      widgetCrd() as never,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } } as never,
    ]);
    await waitForCrdsEstablished(cluster.kubeConfig, [...crds.map((c) => c.metadata.name!), 'mangodbs.mangodb.com', 'widgets.example.klutch.test']);
    await applyManifests(cluster.kubeConfig, [
      template('mangodbs', 'mangodb.com', 'mangodbs', [SECRETS_CLAIM]) as never,
      template('widgets', 'example.klutch.test', 'widgets') as never,
    ]);
    const op = await OidcTestProvider.listen(USERS);
    stops.unshift(() => op.stop());
    const args = [
      '--listen-address=127.0.0.1:0',
      `--oidc-issuer-url=${op.issuer}`,
      `--oidc-issuer-client-id=${CLIENT_ID}`,
      `--oidc-issuer-client-secret=${CLIENT_SECRET}`,
      `--oidc-bearer-audience`,
      CLIENT_ID,
      BACKEND_RESOURCE,
      `--cookie-signing-key=${randomBytes(32).toString('base64')}`,
      '--export-request-grace=3s',
      '--no-leader-elect',
      `--pretty-name=Test Provider`,
      ...(opts.controllers === false ? ['--no-controllers'] : []),
      ...extraArgs,
    ];
    const backend = await startBackend(parseBackendOptions(args), { kubeConfig: cluster.kubeConfig, logger: silentLogger });
    stops.unshift(() => backend.stop());
    op.start(
      [
        { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${backend.url}/callback`, ...(opts.redirectUris ?? [])] },
        { client_id: 'other-app', client_secret: 'other-secret', redirect_uris: ['http://127.0.0.1:1/cb'] },
        { client_id: MACHINE_ID, client_secret: MACHINE_SECRET, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
      ],
      {
        [BACKEND_RESOURCE]: { audience: BACKEND_RESOURCE, scope: 'bind' },
        'urn:other:api': { audience: 'urn:other:api', scope: 'read' },
      },
    );
    const kube = new KubeClient(cluster.kubeConfig);
    stops.unshift(async () => kube.close());
    return {
      cluster,
      kube,
      op,
      backend,
      async stop() {
        for (const s of stops) await s().catch(() => undefined);
      },
    };
  } catch (e) {
    for (const s of stops) await s().catch(() => undefined);
    throw e;
  }
}

export interface LoginResult {
  browser: FetchBrowser;
  resourcesUrl: string;
  resourcesHtml: string;
}

/** Drives /authorize → issuer login page → /callback → /resources with a fetch browser. */
export async function loginViaHttp(
  env: ProviderEnv,
  user: TestUser,
  q: { port?: number; u?: string; s: string; c: string },
  browser = new FetchBrowser(),
  tamper?: (issuerAuthUrl: URL) => URL,
): Promise<LoginResult> {
  const authorize = new URL(`${env.backend.url}/authorize`);
  if (q.port) authorize.searchParams.set('p', String(q.port));
  if (q.u) authorize.searchParams.set('u', q.u);
  authorize.searchParams.set('s', q.s);
  authorize.searchParams.set('c', q.c);
  const first = await browser.request(authorize.href);
  if (first.status !== 302) throw new Error(`/authorize answered ${first.status}: ${await first.text()}`);
  let issuerUrl = new URL(first.headers.get('location')!);
  if (tamper) issuerUrl = tamper(issuerUrl);
  const loginPage = await browser.follow(issuerUrl.href);
  const html = await loginPage.res!.text();
  const done = await browser.signIn(loginPage.url, html, user);
  const text = await done.res!.text();
  return { browser, resourcesUrl: done.url, resourcesHtml: text };
}

/** Submits the Bind form of `resource.group` on the resources page; returns the CLI callback URL. */
export async function clickBind(env: ProviderEnv, login: LoginResult, api: string): Promise<{ status: number; location?: string; body?: string }> {
  const form = new RegExp(
    `<section class="api" [^>]*data-resource="${api.replace(/\./g, '\\.')}"[^>]*>[\\s\\S]*?<form method="post" action="/bind">([\\s\\S]*?)</form>`,
  ).exec(login.resourcesHtml);
  if (!form) throw new Error(`no Bind form for ${api} on the resources page`);
  const fields: Record<string, string> = {};
  for (const m of form[1].matchAll(/name="([^"]+)" value="([^"]*)"/g)) fields[m[1]] = m[2].replace(/&amp;/g, '&');
  const res = await login.browser.request(`${env.backend.url}/bind`, { method: 'POST', form: fields });
  const location = res.headers.get('location') ?? undefined;
  const body = res.status >= 400 ? await res.text() : undefined;
  return { status: res.status, location, body };
}

export function responseFromCallback(location: string): BindingResponse {
  return decodeBindingResponse(new URL(location).searchParams.get('response') ?? '');
}

/** Namespaces carrying our identity label. */
export async function clusterNamespaces(kube: KubeClient): Promise<string[]> {
  const list = await kube.list({ group: '', version: 'v1', plural: 'namespaces', namespaced: false }, undefined, {
    labelSelector: 'example-backend.klutch.anynines.com/identity-hash',
  });
  return list.items
    .filter((n) => !n.metadata.deletionTimestamp)
    .map((n) => n.metadata.name!)
    .sort();
}
