/**
 * Internal helpers shared by the runtime constructs: a hardened container and pod security
 * context, explicit resource requests/limits, and prop validation that names the prop and the
 * value received.
 *
 * The hardening is deliberate and explicit here, not left to cdk8s-plus defaults a reader cannot see:
 * non-root with a fixed uid/gid, read-only root filesystem, no privilege escalation, every
 * capability dropped, the RuntimeDefault seccomp profile, and the ServiceAccount token mounted only
 * where the program talks to the API server.
 */
import { k8s } from 'cdk8s-plus-28';
import { fail, show } from '../_errors.js';
import { checkDnsSubdomain } from '../_names.js';

export { checkDnsLabel, checkDnsSubdomain } from '../_names.js';

/** CPU and memory for one container. Quantities use Kubernetes notation (`100m`, `128Mi`). */
export interface ResourceSpec {
  /** CPU request, e.g. `50m`. */
  readonly cpuRequest: string;
  /** CPU limit, e.g. `500m`. */
  readonly cpuLimit: string;
  /** Memory request, e.g. `64Mi`. */
  readonly memoryRequest: string;
  /** Memory limit, e.g. `256Mi`. */
  readonly memoryLimit: string;
}

/** A reference to one key of a Secret that already exists (never inlined into the manifests). */
export interface SecretKeyRef {
  /** Secret name. */
  readonly name: string;
  /** Key inside the Secret. */
  readonly key: string;
}

/** Non-root uid/gid used by klutch-kit's images (distroless `nonroot`). */
export const NON_ROOT_UID = 65532;

const CPU = /^([0-9]+m|[0-9]+(\.[0-9]+)?)$/;
const MEMORY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Throws unless `value` is a usable container image reference (no `latest`, no whitespace). */
export function checkImage(prop: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || /\s/.test(value)) {
    fail(prop, value, 'is not an image reference');
  }
  const lastSegment = value.split('/').pop() ?? '';
  const tagged = lastSegment.includes(':') || value.includes('@sha256:');
  if (!tagged || value.endsWith(':latest')) {
    fail(prop, value, 'must be pinned to a tag or digest (not "latest"), e.g. "ghcr.io/org/app:1.2.3"');
  }
  return value;
}

/** Throws unless `value` is an integer in [min, max]. */
export function checkInt(prop: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(prop, value, `must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** Throws unless `value` is an absolute http(s) URL; `httpsOnly` requires https. */
export function checkUrl(prop: string, value: unknown, httpsOnly = false): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    fail(prop, value, 'is not an absolute URL');
  }
  if (typeof value !== 'string' || !(url.protocol === 'https:' || (!httpsOnly && url.protocol === 'http:'))) {
    fail(prop, value, `must be an ${httpsOnly ? 'https' : 'http(s)'} URL`);
  }
  return value;
}

/** Throws unless the reference names a Secret and a key. */
export function checkSecretRef(prop: string, ref: SecretKeyRef | undefined): SecretKeyRef {
  if (!ref || typeof ref !== 'object') {
    fail(prop, ref, 'must be a reference { name, key } to an existing Secret');
  }
  checkDnsSubdomain(`${prop}.name`, ref.name);
  if (typeof ref.key !== 'string' || !SECRET_KEY.test(ref.key)) {
    fail(`${prop}.key`, ref.key, 'is not a valid Secret key');
  }
  return ref;
}

/** Throws unless `value` is an environment variable name. */
export function checkEnvName(prop: string, value: unknown): string {
  if (typeof value !== 'string' || !ENV_NAME.test(value)) {
    fail(prop, value, 'is not an environment variable name');
  }
  return value;
}

/** Validates a ResourceSpec: CPU/memory syntax and request ≤ limit. */
export function checkResources(prop: string, r: ResourceSpec): ResourceSpec {
  for (const k of ['cpuRequest', 'cpuLimit'] as const) {
    if (typeof r[k] !== 'string' || !CPU.test(r[k])) fail(`${prop}.${k}`, r[k], 'is not a CPU quantity (e.g. "100m" or "0.5")');
  }
  for (const k of ['memoryRequest', 'memoryLimit'] as const) {
    if (typeof r[k] !== 'string' || !MEMORY.test(r[k])) fail(`${prop}.${k}`, r[k], 'is not a memory quantity (e.g. "128Mi")');
  }
  if (cpuMillis(r.cpuRequest) > cpuMillis(r.cpuLimit)) {
    fail(`${prop}.cpuRequest`, r.cpuRequest, `is greater than cpuLimit ${show(r.cpuLimit)}`);
  }
  if (memoryBytes(r.memoryRequest) > memoryBytes(r.memoryLimit)) {
    fail(`${prop}.memoryRequest`, r.memoryRequest, `is greater than memoryLimit ${show(r.memoryLimit)}`);
  }
  return r;
}

function cpuMillis(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000;
}

function memoryBytes(q: string): number {
  const units: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  const m = /^([0-9.]+)([A-Za-z]*)$/.exec(q)!;
  return Number(m[1]) * (units[m[2]] ?? 1);
}

/** Container resources in the k8s L1 shape. */
export function resourceRequirements(r: ResourceSpec): k8s.ResourceRequirements {
  return {
    requests: { cpu: k8s.Quantity.fromString(r.cpuRequest), memory: k8s.Quantity.fromString(r.memoryRequest) },
    limits: { cpu: k8s.Quantity.fromString(r.cpuLimit), memory: k8s.Quantity.fromString(r.memoryLimit) },
  };
}

/** The container-level security context every klutch-kit container gets. */
export function hardenedContainerSecurityContext(): k8s.SecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: NON_ROOT_UID,
    runAsGroup: NON_ROOT_UID,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    privileged: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** The pod-level security context every klutch-kit pod gets. */
export function hardenedPodSecurityContext(): k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: NON_ROOT_UID,
    runAsGroup: NON_ROOT_UID,
    fsGroup: NON_ROOT_UID,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Downward-API env vars POD_NAME / POD_NAMESPACE (leader-election identity and lease namespace). */
export function podIdentityEnv(): k8s.EnvVar[] {
  return [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
  ];
}

/** An env var whose value comes from an existing Secret. */
export function secretEnv(name: string, ref: SecretKeyRef): k8s.EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } };
}

/** A writable scratch directory (the root filesystem is read-only). */
export const TMP_VOLUME: k8s.Volume = { name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } };
export const TMP_MOUNT: k8s.VolumeMount = { name: 'tmp', mountPath: '/tmp' };
