/**
 * What provider-anynines on a harness cluster is, whichever way it runs (a process in a namespace of
 * its own, anynines.ts, or a pod of Crossplane's package runtime, anynines-pods.ts): its options, the
 * harness interface, the base both extend, and the objects and package both install.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import { AnyninesProviderFlavour, Provider } from '../../constructs/crossplane/index.js';
import { PROVIDER_ANYNINES_PACKAGE } from '../../constructs/topology/control-plane-cluster.js';
import { type A9sComponentName, KLUTCHIO_PINS } from './build.js';
import type { KlutchioPin } from './klutchio.js';
import type { CrossplaneHarness } from './crossplane-harness.js';
import { registryDir } from './registry.js';
import { forgetAtExit } from './_harness.js';
import type { RealCluster } from './cluster.js';

/** The registry prefix of PROVIDER_ANYNINES_PACKAGE that the harness rewrites to its registry. */
export const PROVIDER_ANYNINES_PREFIX = PROVIDER_ANYNINES_PACKAGE.slice(0, PROVIDER_ANYNINES_PACKAGE.lastIndexOf('/'));

/** What the harness builds and installs for a flavour: the component (and so the klutchio pin) and the package the constructs name. */
export function providerAnyninesBuild(flavour: AnyninesProviderFlavour = AnyninesProviderFlavour.CLUSTER_SCOPED): {
  readonly component: A9sComponentName;
  readonly pin: KlutchioPin;
  readonly package: string;
  /** The registry prefix of `package` the harness rewrites to its registry. */
  readonly prefix: string;
} {
  const component: A9sComponentName = flavour === AnyninesProviderFlavour.NAMESPACED ? 'provider-anynines-v2' : 'provider-anynines';
  const pkg = flavour.defaultPackage;
  return { component, pin: KLUTCHIO_PINS[component], package: pkg, prefix: pkg.slice(0, pkg.lastIndexOf('/')) };
}
/** The CRD whose establishment starts the provider. */
export const READY_CRD = 'serviceinstances.dataservices.anynines.com';
export const HEALTH_PORT = 8081;

export interface ProviderAnyninesOptions {
  /**
   * Which provider-anynines: cluster-scoped managed resources (Klutch 1.5.0, for claims) or namespaced ones (Klutch's
   * Crossplane v2 branch, for namespaced XRs; Crossplane 2.x only). Pass the catalogue's `apiStyle.anyninesProvider`.
   * @default AnyninesProviderFlavour.CLUSTER_SCOPED
   */
  readonly flavour?: AnyninesProviderFlavour;
  /** The provider binary. @default ensureComponent() of the flavour's component (built from its klutchio sources on a cold cache) */
  readonly binary?: string;
  /** The klutchio sources (package metadata and CRDs). @default ensureKlutchioSource() of the flavour's pin (fetched at the pinned commit, or its variable's mirror) */
  readonly klutchioDir?: string;
  /** Ports on the host's 127.0.0.1 the provider must reach (broker stand-ins); it reaches them at `127.0.0.1:<port>` in its namespace. */
  readonly forwardPorts?: readonly number[];
  /** provider-anynines `--poll`. @default '5s' */
  readonly pollInterval?: string;
  /** Extra provider flags, e.g. `['--debug']`. @default none */
  readonly args?: readonly string[];
  /** Time allowed for the package to install and the provider to get ready. @default 180000 */
  readonly readyTimeoutMs?: number;
  /** The Crossplane harness of `cluster`, when it was started apart (`startCrossplane`). @default cluster.crossplane */
  readonly crossplane?: CrossplaneHarness;
  readonly log?: (line: string) => void;
}

/** provider-anynines running on a harness cluster. */
export interface ProviderAnyninesHarness {
  /**
   * Where the provider reaches `forwardPorts` (`http://<hostIp>:<port>`): `127.0.0.1` of its namespace, forwarded to the
   * host's; as a pod, the node IP (a forwarder of the harness there).
   */
  readonly hostIp: string;
  /**
   * Where the host reaches the provider's health server (`http://<nsIp>:8081/healthz`, `/backend-health`): a loopback
   * address of 127.231.0.0/16. Empty as a pod.
   */
  readonly nsIp: string;
  /** Its network namespace, as the kernel names it (`net:[…]`); it ends with its processes. Empty as a pod. */
  readonly networkNamespace: string;
  readonly logFile: string;
  /** The klutchio release (the package tag) it was built from. */
  readonly version: string;
  /** Which provider-anynines runs. */
  readonly flavour: AnyninesProviderFlavour;
  /** The provider's process (undefined as a pod: Crossplane's package runtime runs it). */
  readonly pid: number | undefined;
  /** The host processes of the harness: the provider and its forwarders, or as a pod only its forwarder. */
  pids(): number[];
  /** `http://<hostIp>:<port>`: a host port on 127.0.0.1 as the provider reaches it (must be in `forwardPorts`). */
  urlFor(port: number): string;
  stop(): Promise<void>;
  killSync(): void;
}

export type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> & { conditions?: Array<Record<string, string>> } };

/** The `Provider` our constructs emit for provider-anynines of a flavour (the control plane's, unchanged). */
export function providerAnyninesObject(flavour: AnyninesProviderFlavour = AnyninesProviderFlavour.CLUSTER_SCOPED): Obj {
  const chart = new Chart(new App(), 'harness-a9s');
  new Provider(chart, 'ProviderAnynines', { package: flavour.defaultPackage, name: 'provider-anynines' });
  return (chart.toJson() as Obj[])[0]!;
}

/** `package.yaml` of provider-anynines: its `crossplane.yaml` followed by its CRDs (the klutchio sources' `package/`). */
export function providerAnyninesPackageYaml(klutchioDir: string): string {
  const dir = path.join(klutchioDir, 'provider-anynines', 'package');
  const crdDir = path.join(dir, 'crds');
  const docs = [fs.readFileSync(path.join(dir, 'crossplane.yaml'), 'utf8')];
  for (const f of fs.readdirSync(crdDir).sort()) if (f.endsWith('.yaml')) docs.push(fs.readFileSync(path.join(crdDir, f), 'utf8'));
  return docs.map((d) => d.replace(/^---\s*\n/, '').replace(/\s+$/, '')).join('\n---\n') + '\n';
}

/** What both ways of running provider-anynines share (a process here, a pod in anynines-pods.ts): its folder, log, registry entry, URLs. */
export abstract class ProviderAnyninesBase {
  hostIp = '';
  readonly logFile: string;
  readonly flavour: AnyninesProviderFlavour;
  readonly version: string;
  /** What runs: the flavour's component, klutchio pin and package. */
  protected readonly build: ReturnType<typeof providerAnyninesBuild>;
  protected readonly dir: string;
  protected readonly registryFile: string;

  constructor(
    protected readonly cluster: RealCluster,
    protected readonly opts: ProviderAnyninesOptions,
  ) {
    this.flavour = opts.flavour ?? AnyninesProviderFlavour.CLUSTER_SCOPED;
    this.build = providerAnyninesBuild(this.flavour);
    this.version = this.build.pin.version;
    this.dir = path.join(cluster.dir, 'provider-anynines');
    fs.mkdirSync(this.dir, { recursive: true });
    this.logFile = path.join(this.dir, 'provider-anynines.log');
    this.registryFile = path.join(registryDir(), `${process.pid}-${path.basename(cluster.dir)}-provider-anynines.json`);
  }

  urlFor(port: number): string {
    if (!(this.opts.forwardPorts ?? []).includes(port)) {
      throw new Error(
        `ProviderAnyninesHarness.urlFor: port ${port} is not forwarded; pass it in forwardPorts (${JSON.stringify(this.opts.forwardPorts ?? [])})`,
      );
    }
    return `http://${this.hostIp}:${port}`;
  }

  /** Out of the set the exit hook kills (once stopped). */
  protected forget(): void {
    forgetAtExit(this);
  }

  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;
  abstract killSync(): void;
}
