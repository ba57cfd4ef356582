/**
 * Bench-only launcher of light app clusters for `npm run bench:scale` (scripts/bench-scale.ts).
 *
 * K app clusters are K real kube-apiserver processes (the binaries runtime/realinfra builds and
 * caches) sharing ONE etcd, each with its own `--etcd-prefix=/app-<k>`: every app cluster has its own
 * API, its own Namespaces (so its own `klutch-bind` namespace UID and Klutch cluster id), its own CRDs
 * and objects, exactly as separate clusters would, but without an etcd and a kube-controller-manager
 * each. Nothing the konnector uses needs the controller manager (no pods, no ServiceAccount tokens:
 * the konnector and kubectl-bind authenticate with the admin client certificate), and the app side
 * is not what the bench measures. One PKI (one CA, one serving certificate for 127.0.0.1, one admin
 * certificate) serves all of them. The API servers are started the same way runtime/realinfra's
 * startCluster starts its one (same TLS, RBAC and service-account flags), plus one flag that only makes
 * them smaller: watch cache off (konnector informers are then served from etcd directly). Switching
 * unused API groups off (`--runtime-config`) is not possible: the API server's own post-start hooks
 * (priority classes, APF bootstrap, RBAC) need them.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ensureBinaries, freePort, HarnessProcess, logTail, probe, type RealInfraBinaries } from '../runtime/realinfra/index.js';
import { createClusterPki, type ClusterPki } from '../runtime/realinfra/pki.js';

export interface AppServer {
  readonly name: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly pid: number | undefined;
}

export interface AppServers {
  readonly dir: string;
  readonly apps: AppServer[];
  readonly etcdPid: number | undefined;
  /** Starts `n` more app API servers (named `<prefix>-<index>`), `parallel` at a time. */
  add(n: number, parallel?: number): Promise<AppServer[]>;
  stop(): Promise<void>;
}

/** kube-apiserver flags that only shrink an app API server the bench does not measure. */
export const LIGHT_APP_FLAGS: Readonly<Record<string, string>> = {
  'watch-cache': 'false',
  profiling: 'false',
};

async function waitUntil(p: HarnessProcess<string>, what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (p.exit) throw new Error(`bench:scale: ${p.component} ${p.describeExit()} before ${what}\n${logTail(p.logFile)}`);
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`bench:scale: ${p.component} not ready within ${timeoutMs / 1000} s (${what})\n${logTail(p.logFile)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Starts the shared etcd of the app clusters; add app API servers with `add()`. */
export async function startAppServers(
  opts: { prefix?: string; binaries?: RealInfraBinaries; baseDir?: string; log?: (l: string) => void } = {},
): Promise<AppServers> {
  const prefix = opts.prefix ?? 'app';
  const log = opts.log ?? (() => {});
  const bins = opts.binaries ?? (await ensureBinaries());
  const dir = fs.mkdtempSync(path.join(opts.baseDir ?? os.tmpdir(), 'klutch-kit-scale-apps-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  const pki: ClusterPki = await createClusterPki(path.join(dir, 'pki'), 'scale-apps');
  const procs: Array<HarnessProcess<string>> = [];
  const killAll = () => {
    for (const p of procs) p.killSync();
  };
  process.on('exit', killAll);

  const etcdPort = await freePort();
  const peerPort = await freePort();
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const etcd = new HarnessProcess({
    component: 'apps-etcd',
    binary: bins.etcd,
    args: [
      '--name=apps',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=apps=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
      '--quota-backend-bytes=8589934592',
    ],
    logFile: path.join(dir, 'logs', 'etcd.log'),
    cwd: dir,
  });
  procs.push(etcd);
  await waitUntil(etcd, `GET ${etcdUrl}/health`, async () => (await probe(`${etcdUrl}/health`)).status === 200, 60_000);
  log(`app etcd ready on ${etcdUrl}`);

  const apps: AppServer[] = [];
  const tls = { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem };

  async function startOne(index: number): Promise<AppServer> {
    const name = `${prefix}-${index}`;
    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;
    const args = Object.entries({
      'etcd-servers': etcdUrl,
      'etcd-prefix': `/${name}`,
      'bind-address': '127.0.0.1',
      'advertise-address': '127.0.0.1',
      'secure-port': String(port),
      'tls-cert-file': pki.servingCert,
      'tls-private-key-file': pki.servingKey,
      'client-ca-file': pki.caCert,
      'cert-dir': path.join(dir, `certs-${name}`),
      'authorization-mode': 'Node,RBAC',
      'service-account-issuer': server,
      'service-account-key-file': pki.serviceAccountPublicKey,
      'service-account-signing-key-file': pki.serviceAccountKey,
      'service-cluster-ip-range': '10.0.0.0/24',
      'endpoint-reconciler-type': 'none',
      ...LIGHT_APP_FLAGS,
    }).map(([k, v]) => `--${k}=${v}`);
    const p = new HarnessProcess({
      component: `kube-apiserver ${name}`,
      binary: bins.kubeApiServer,
      args,
      logFile: path.join(dir, 'logs', `${name}.log`),
      cwd: dir,
    });
    procs.push(p);
    await waitUntil(p, `GET ${server}/readyz`, async () => (await probe(`${server}/readyz`, tls)).status === 200, 180_000);
    const kubeconfigPath = path.join(dir, `${name}.kubeconfig`);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    fs.writeFileSync(
      kubeconfigPath,
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': name,
        clusters: [{ name, cluster: { server, 'certificate-authority-data': b64(pki.caPem) } }],
        users: [{ name: `${name}-admin`, user: { 'client-certificate-data': b64(pki.adminCertPem), 'client-key-data': b64(pki.adminKeyPem) } }],
        contexts: [{ name, context: { cluster: name, user: `${name}-admin` } }],
      }),
      { mode: 0o600 },
    );
    return {
      name,
      server,
      kubeconfigPath,
      get pid() {
        return p.pid;
      },
    };
  }

  return {
    dir,
    apps,
    get etcdPid() {
      return etcd.pid;
    },
    async add(n: number, parallel = 4): Promise<AppServer[]> {
      const first = apps.length;
      const out: AppServer[] = new Array<AppServer>(n);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(parallel, n) }, async () => {
          while (next < n) {
            const i = next++;
            out[i] = await startOne(first + i);
            log(`app API server ${out[i]!.name} ready on ${out[i]!.server}`);
          }
        }),
      );
      apps.push(...out);
      return out;
    },
    async stop(): Promise<void> {
      const apis = procs.filter((p) => p !== etcd);
      await Promise.all(apis.map((p) => p.stop(3000)));
      await etcd.stop(5000);
      process.removeListener('exit', killAll);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
