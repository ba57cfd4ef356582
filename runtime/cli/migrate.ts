// `klutch-kit migrate`: the control-plane steps of the migration from claims to namespaced XRs
// (docs/dataservice.md). `release-claims` saves the claims, then releases them without losing what they
// composed; `create-xrs` re-creates them as namespaced XRs once the catalogue is replaced. The steps are
// in migrate-claims.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { parseAllDocuments, stringify } from 'yaml';
import { UsageError } from './errors.js';

interface CommonOptions {
  kubeconfig?: string;
  context?: string;
  timeout: string;
  quiet?: boolean;
}

function timeoutMs(value: string): number {
  const m = /^([1-9][0-9]*)(s|m)$/.exec(value);
  if (!m) throw new UsageError(`--timeout: "${value}" is not a duration; give seconds or minutes, e.g. 300s or 10m`);
  return Number(m[1]) * (m[2] === 'm' ? 60_000 : 1000);
}

/** The control plane's client (loaded when a command runs: the runtime peers are optional for the other commands). */
async function clientOf(o: CommonOptions) {
  const [{ KubeClient }, { loadKubeconfigFile }, { loadDefaultKubeconfig }] = await Promise.all([
    import('../core/client.js'),
    import('../core/kubeconfig.js'),
    import('../core/kubeconfig-default.js'),
  ]);
  if (o.kubeconfig !== undefined && !fs.existsSync(o.kubeconfig))
    throw new UsageError(`--kubeconfig: ${o.kubeconfig} does not exist; give the control plane's kubeconfig`);
  const access = o.kubeconfig ? loadKubeconfigFile(o.kubeconfig, o.context) : loadDefaultKubeconfig(o.context);
  return new KubeClient(access, { userAgent: 'klutch-kit-migrate' });
}

const logger = (quiet: boolean | undefined) => {
  const t0 = Date.now();
  return quiet ? () => {} : (line: string) => process.stderr.write(`[migrate +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
};

const common = (c: Command): Command =>
  c
    .option('--kubeconfig <file>', "the control plane's kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
    .option('--context <name>', 'the kubeconfig context')
    .option('--timeout <duration>', 'time allowed for each wait, e.g. 300s or 10m', '300s')
    .option('--quiet', 'no progress lines');

async function releaseClaims(o: CommonOptions & { save: string; group: string; namespace?: string[] }): Promise<void> {
  const save = path.resolve(o.save);
  if (fs.existsSync(save)) throw new UsageError(`--save: ${save} exists; it may hold the claims an earlier run saved: give a new path`);
  if (!fs.existsSync(path.dirname(save))) throw new UsageError(`--save: folder ${path.dirname(save)} does not exist`);
  const ms = timeoutMs(o.timeout);
  const { planRelease, executeRelease } = await import('./migrate-claims.js');
  const client = await clientOf(o);
  const log = logger(o.quiet);
  try {
    const deps = { client, log, timeoutMs: ms };
    const plan = await planRelease(deps, { group: o.group, ...(o.namespace?.length ? { namespaces: o.namespace } : {}) });
    // Saved before anything changes: `create-xrs --from` reads it.
    fs.writeFileSync(save, stringify({ apiVersion: 'v1', kind: 'List', items: plan.claims }), { mode: 0o600 });
    log(`saved ${plan.claims.length} claim(s) to ${save}`);
    await executeRelease(deps, plan);
  } finally {
    client.close();
  }
}

async function createXrsCommand(o: CommonOptions & { from: string; wait: boolean }): Promise<void> {
  let text: string;
  try {
    text = fs.readFileSync(o.from, 'utf8');
  } catch (e) {
    throw new UsageError(`--from: cannot read ${o.from} (${(e as Error).message}); give the file \`klutch-kit migrate release-claims --save\` wrote`);
  }
  const items = parseAllDocuments(text).flatMap((d) => {
    const v = d.toJS() as { kind?: string; items?: unknown[] } | null;
    return v?.kind === 'List' && Array.isArray(v.items) ? v.items : v ? [v] : [];
  });
  if (items.length === 0) throw new UsageError(`--from: ${o.from} holds no claims`);
  const ms = timeoutMs(o.timeout);
  const { createXrs } = await import('./migrate-claims.js');
  const client = await clientOf(o);
  try {
    await createXrs({ client, log: logger(o.quiet), timeoutMs: ms }, items, { wait: o.wait });
  } finally {
    client.close();
  }
}

export function migrateCommand(): Command {
  const cmd = new Command('migrate').description('move a control plane from claims to namespaced XRs without losing a database (docs/dataservice.md)');
  cmd.addCommand(
    common(new Command('release-claims'))
      .description(
        'save the claims, pause their XRs, orphan and delete what they composed (checking the operator objects stay), delete the claims and let the XRs go',
      )
      .requiredOption('--save <file>', 'where the claims are saved (YAML List) before anything changes; must not exist')
      .option('--group <group>', 'the API group of the claims', 'anynines.com')
      .option('--namespace <ns...>', 'only the claims of these namespaces (default: all)')
      .action(releaseClaims),
  );
  cmd.addCommand(
    common(new Command('create-xrs'))
      .description('re-create saved claims as namespaced XRs (after the catalogue is replaced) and wait until they are Ready')
      .requiredOption('--from <file>', 'the file `release-claims --save` wrote')
      .option('--no-wait', 'do not wait until the XRs are Ready')
      .action(createXrsCommand),
  );
  return cmd;
}
