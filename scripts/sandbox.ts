/**
 * `npm run sandbox`: a whole Klutch on this machine, no Docker and no cloud (docs/sandbox.md).
 * Stays in the foreground until Ctrl-C / SIGTERM / `npm run sandbox -- --down`, then stops everything.
 *
 *   npm run sandbox                 # up, provision the demo claims, keep running
 *   npm run sandbox -- --no-demo    # up only
 *   npm run sandbox -- --a9s        # also a9s: provider-anynines and the broker stand-in, a second psql line
 *   npm run sandbox -- --down       # stop a running sandbox (from another shell)
 *   npm run sandbox -- --api-style namespaced   # the catalogue as namespaced XRs, bound without claims
 *                                               # (Crossplane v2 style; default: claims)
 *   npm run sandbox -- --pods       # a real node: backend, Dex, konnectors and Crossplane as pods (root, one per host)
 *   npm run sandbox -- --pods --a9s --api-style namespaced   # the flags combine freely (docs/sandbox.md has the table)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseSandboxArgs, SandboxArgsError, type SandboxArgs } from '../sandbox/args.js';
import { SANDBOX_DIR, STATE_FILE, type SandboxState } from '../sandbox/state.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function down(): Promise<number> {
  if (!fs.existsSync(STATE_FILE)) {
    process.stdout.write(`no sandbox is running (no ${STATE_FILE})\n`);
    return 0;
  }
  const state = JSON.parse(fs.readFileSync(STATE_FILE, 'utf8')) as SandboxState;
  if (alive(state.supervisorPid)) {
    process.stdout.write(`stopping the sandbox (pid ${state.supervisorPid}) …\n`);
    process.kill(state.supervisorPid, 'SIGTERM');
    const end = Date.now() + 60_000;
    while (alive(state.supervisorPid) && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
  }
  // Whatever the supervisor did not stop (it was killed, or timed out): the recorded processes, by pid.
  const left = [...state.processes.map((p) => p.pid), ...state.clusters.flatMap((c) => c.pids), state.supervisorPid].filter(alive);
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  // PostgreSQL servers of the local a8s operator (and of the a9s broker stand-in) the supervisor did not stop: by the pid in postmaster.pid
  for (const dataDir of [state.a8sDataDir, state.a9sDataDir]) {
    if (!dataDir || !fs.existsSync(dataDir)) continue;
    for (const inst of fs.readdirSync(dataDir)) {
      const pidFile = path.join(dataDir, inst, 'data', 'postmaster.pid');
      const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]) : NaN;
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
        process.kill(pid, 'SIGKILL');
        left.push(pid);
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  for (const c of state.clusters) fs.rmSync(c.dir, { recursive: true, force: true });
  fs.rmSync(state.dir, { recursive: true, force: true });
  fs.rmSync(STATE_FILE, { force: true });
  process.stdout.write(`sandbox stopped${left.length ? ` (killed leftover pids ${left.join(', ')})` : ''}\n`);
  return 0;
}

async function up(args: SandboxArgs): Promise<number> {
  const { demo, a9s, pods } = args;
  if (fs.existsSync(STATE_FILE)) {
    const state = JSON.parse(fs.readFileSync(STATE_FILE, 'utf8')) as SandboxState;
    if (alive(state.supervisorPid)) {
      process.stderr.write(`a sandbox is already running (pid ${state.supervisorPid}); stop it with: npm run sandbox -- --down\n`);
      return 1;
    }
    fs.rmSync(STATE_FILE, { force: true });
  }
  // every missing prerequisite at once, before any Go build (which takes minutes on a fresh machine)
  const { formatMissing, kubectlNote, missingPrerequisites, SANDBOX_GO_COMPONENTS, systemLookup } = await import('../sandbox/prerequisites.js');
  const lookup = await systemLookup();
  const missing = missingPrerequisites(lookup, process.env, { pods, a9s });
  if (missing.length > 0) {
    process.stderr.write(`${formatMissing(missing)}\n`);
    return 1;
  }
  process.stdout.write(`klutch-kit sandbox: state under ${SANDBOX_DIR}\n`);
  // A cold cache: the Go builds first, one line each with the estimate of what is left (else the first step would be
  // silent for its minutes of builds). `npm run setup` does them ahead, as a warm-up.
  const uncached = lookup.uncached();
  if (uncached.length > 0) {
    const { buildItem, buildWithProgress } = await import('./_go-builds.js');
    const t = Date.now();
    const log = (line: string) => process.stdout.write(`[build +${((Date.now() - t) / 1000).toFixed(0)} s] ${line}\n`);
    await buildWithProgress(
      uncached.map((c) => buildItem(c as Parameters<typeof buildItem>[0])),
      SANDBOX_GO_COMPONENTS.length,
      log,
    );
  }
  // imported here so that --down starts fast and loads no OIDC provider / Pulumi SDK
  const t0 = Date.now();
  const { changeDemoPlan, provisionDemo, startSandbox } = await import('../sandbox/sandbox.js');
  const { apiStyleNamed } = await import('../constructs/dataservice/index.js');
  const sb = await startSandbox({ writeState: true, a9s, pods, apiStyle: apiStyleNamed('--api-style', args.apiStyle) });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('stopping the sandbox …\n');
    await sb.stop();
    process.stdout.write('sandbox stopped\n');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  let psql: string | undefined;
  let psqlA9s: string | undefined;
  if (demo) {
    try {
      // the a9s demo runs beside the a8s one (each PostgreSQL server reserves its loopback address host-wide); its
      // lines are printed after the a8s psql line
      const a9sLines: string[] = [];
      const { provisionA9sDemo } = await import('../sandbox/a9s.js');
      const a9sDemo = sb.a9s ? provisionA9sDemo(sb.a9s, { controlPlane: sb.controlPlane, app: sb.apps[0] }, (l) => a9sLines.push(l)) : undefined;
      a9sDemo?.catch(() => undefined);
      const d = await provisionDemo(sb);
      psql = d.psql;
      process.stdout.write(
        `\n  connect (${((Date.now() - t0) / 1000).toFixed(1)} s after start; claim → first connection ${d.hops['first connection with those credentials']!.toFixed(1)} s):\n  ${psql}\n\n`,
      );
      if (a9sDemo) {
        const a = await a9sDemo.catch((e: Error) => {
          process.stdout.write(`${a9sLines.join('\n')}\n`);
          throw new Error(`a9s: ${e.message}`);
        });
        psqlA9s = a.psql;
        process.stdout.write(
          `      a9s PostgresqlInstance + ServiceBinding in ${sb.apps[0].name}: through provider-anynines to the broker stand-in, credentials back down\n${a9sLines.join('\n')}\n\n  connect to the a9s PostgreSQL (claim → first connection ${a.hops['first connection with those credentials']!.toFixed(1)} s):\n  ${psqlA9s}\n\n`,
        );
      }
      await changeDemoPlan(sb, d);
    } catch (e) {
      process.stderr.write(`demo failed: ${(e as Error).message}\n`);
      await stop();
      return 1;
    }
  }
  const [a1, a2] = sb.apps;
  process.stdout.write(
    [
      '',
      'Klutch sandbox is up.',
      `  backend           ${sb.backendUrl}`,
      `  OIDC issuer       ${sb.issuer}${sb.pods ? ' (Dex, a pod)' : ''}`,
      `  control plane     KUBECONFIG=${sb.controlPlane.kubeconfigPath}`,
      `  app-1             KUBECONFIG=${a1.kubeconfigPath}`,
      `  app-2             KUBECONFIG=${a2.kubeconfigPath}`,
      `  logs              ${sb.dir}/logs`,
      ...[kubectlNote(lookup)].filter((n) => n !== undefined).map((n) => `  note              ${n}`),
      `  e.g.              kubectl --kubeconfig ${a1.kubeconfigPath} get postgresqlinstances,servicebindings,secrets -n shop`,
      sb.apiStyle.namespaced
        ? `                    kubectl --kubeconfig ${sb.controlPlane.kubeconfigPath} get postgresqlinstances,servicebindings,objects.kubernetes.m.crossplane.io,postgresqls.postgresql.anynines.com -A`
        : `                    kubectl --kubeconfig ${sb.controlPlane.kubeconfigPath} get claim,composite,objects.kubernetes.crossplane.io,postgresqls.postgresql.anynines.com -A`,
      ...(psql ? [`  psql              ${psql}`] : []),
      ...(psqlA9s ? [`  psql (a9s)        ${psqlA9s}`] : []),
      'Stop with Ctrl-C or: npm run sandbox -- --down',
      '',
    ].join('\n'),
  );
  await new Promise(() => undefined);
  return 0;
}

let args: SandboxArgs;
try {
  args = parseSandboxArgs(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof SandboxArgsError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}
(args.command === 'down' ? down() : up(args)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`sandbox: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
