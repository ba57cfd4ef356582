#!/usr/bin/env node
/**
 * `kubectl-bind` (kubectl plugin `kubectl bind`): bind data-service APIs of a klutch bind backend
 * into this cluster. Exit codes: 0 ok, 1 failure, 2 usage, 3 login/authentication,
 * 4 export request Failed on the provider, 5 permission claim not accepted.
 */
import { Command, CommanderError, Option } from 'commander';
import type { KubeObject } from '../core/index.js';
import type { IO } from './apiservice.js';
import { packageVersion } from '../core/version.js';
import { CliError, Exit } from './exit.js';
import { KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';
import { revokeCommand } from './revoke.js';

/** Optional peer dependencies of the runtime (package.json `peerDependenciesMeta`). */
export const RUNTIME_PEERS = ['@kubernetes/client-node', 'openid-client', 'jose', 'pino', 'prom-client'] as const;

/** The peer a failed import could not find, if that is why it failed. */
function missingPeer(e: unknown): string | undefined {
  const err = e as { code?: unknown; message?: unknown };
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'MODULE_NOT_FOUND') return undefined;
  return RUNTIME_PEERS.find((p) => String(err.message).includes(`'${p}'`));
}

/**
 * The modules that do the work. They need the runtime peers (pino, prom-client, … through
 * runtime/core), so they are loaded once the arguments are parsed: `--help`, `--version` and usage
 * errors work in a project that installed klutch-kit without them.
 */
async function loadRuntime() {
  try {
    const [core, apiservice, binding, util, consent] = await Promise.all([
      import('../core/index.js'),
      import('./apiservice.js'),
      import('./bind.js'),
      import('./util.js'),
      import('./consent.js'),
    ]);
    return {
      ApiError: core.ApiError,
      ...apiservice,
      ...binding,
      ...util,
      parseAllowResources: consent.parseAllowResources,
      parseAllowNamespaces: consent.parseAllowNamespaces,
    };
  } catch (e) {
    const pkg = missingPeer(e);
    if (pkg)
      throw new CliError(`the package ${pkg} is not installed; kubectl-bind needs the runtime peers: npm install ${RUNTIME_PEERS.join(' ')}`, Exit.FAILED);
    throw e;
  }
}
let runtime: Awaited<ReturnType<typeof loadRuntime>> | undefined;
const load = async () => (runtime ??= await loadRuntime());

const kubeFlags = (c: Command) =>
  c
    .option('--kubeconfig <file>', 'kubeconfig of the app cluster (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context of the app cluster')
    .addOption(new Option('-o, --output <format>', 'print the result as yaml or json'))
    .option('-d, --dry-run', 'print the export request(s) and bind nothing (no request, Secret, konnector or binding)', false)
    .option('--yes', 'accept all permission claims without asking', false)
    .option(
      '--allow-resource <plural.group>',
      "let the provider export or claim this resource outside the default allow-list (its own APIs, claimed Secrets and ConfigMaps), e.g. daemonsets.apps; repeatable; added to the konnector's allow-list",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--allow-namespace <namespace>',
      'a namespace where the konnector may read and write Secrets and ConfigMaps (a RoleBinding there); it syncs nothing elsewhere; repeatable; added to the installed konnector\'s, never dropped; must exist (default: the kubeconfig context\'s namespace, else "default")',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--all-namespaces',
      'give the konnector Secret and ConfigMap read/write in EVERY namespace (the weaker choice; needed again on each bind to keep an installed konnector cluster-wide)',
      false,
    )
    .option('--skip-konnector', 'do not install or upgrade the konnector', false)
    .option('--konnector-image <image>', 'konnector image to install (default: the one matching this kubectl-bind)')
    .option('--timeout <duration>', 'how long to wait for the login and for the provider', '10m');

/** `--version`: the plugin's version and the Klutch bind API it speaks. */
export function versionLine(): string {
  return `kubectl-bind v${packageVersion()} (klutch-kit; Klutch binding API klutch.anynines.com/v1alpha1)`;
}

export function program(io: IO, env: NodeJS.ProcessEnv = process.env): Command {
  // named as kubectl shows the plugin, so usage lines read "kubectl bind …"
  const root = new Command('kubectl bind')
    .description('Bind data-service APIs of a klutch bind backend into this Kubernetes cluster.')
    .version(versionLine(), '--version', 'print the version of kubectl-bind and exit')
    .argument('[url]', "the backend's export URL, e.g. https://bind.example.com/export")
    .option('--open', 'open the login URL in the browser', false)
    .option('--verbose', 'print the stack trace of an unexpected error (also $KUBECTL_BIND_DEBUG=1)')
    .option('--token <jwt>', "non-interactive: a JWT from the backend's OIDC issuer (or $KLUTCH_BIND_TOKEN)")
    .option(
      '--resource <plural.group>',
      'with --token: an API to bind, e.g. postgresqlinstances.anynines.com; repeatable (one login, the provider kubeconfig stored once)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .enablePositionalOptions() // flags after "apiservice" belong to it (both define --kubeconfig …)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out.write(s), writeErr: (s) => io.err.write(s) })
    .showHelpAfterError('(run "kubectl bind --help" for usage)');
  kubeFlags(root);
  root.action(async (url: string | undefined, o: Record<string, unknown>) => {
    if (!url) throw new CliError("missing <url>: pass the backend's export URL, e.g. kubectl bind https://bind.example.com/export", Exit.USAGE);
    const token = (o.token as string | undefined) ?? env.KLUTCH_BIND_TOKEN;
    const resources = o.resource as string[];
    if (resources.length > 0 && !token) throw new CliError('--resource is only used with --token (non-interactive binding)', Exit.USAGE);
    const {
      bind,
      checkSecureUrl,
      clientFor,
      loadKubeConfig,
      parseAllowNamespaces,
      parseAllowResources,
      parseBindResources,
      parseOutput,
      parseTimeout,
      safeClose,
    } = await load();
    if (token) parseBindResources(resources);
    checkSecureUrl('the export URL', url);
    const output = parseOutput(o.output as string | undefined);
    const allowResources = parseAllowResources(o.allowResource as string[]);
    const allowNamespaces = parseAllowNamespaces(o.allowNamespace as string[]);
    const timeoutMs = parseTimeout('--timeout', o.timeout as string);
    const access = loadKubeConfig({ kubeconfig: o.kubeconfig as string, context: o.context as string });
    const consumer = clientFor(access);
    try {
      await bind({
        url,
        consumer,
        dryRun: o.dryRun as boolean,
        open: o.open as boolean,
        yes: o.yes as boolean,
        skipKonnector: o.skipKonnector as boolean,
        konnectorImage: o.konnectorImage as string | undefined,
        output,
        timeoutMs,
        token,
        resources,
        allowResources,
        allowNamespaces,
        allNamespaces: o.allNamespaces as boolean,
        contextNamespace: access.namespace,
        io,
      });
    } finally {
      safeClose(consumer);
    }
  });

  const apiservice = new Command('apiservice')
    .description('Bind the APIs of an APIServiceExportRequest with a provider kubeconfig (what "kubectl bind <url>" does after the login).')
    .argument('[url]', 'the request as an http(s) URL (same as -f <url>)')
    .option('-f, --file <file>', 'the APIServiceExportRequest: a file, an http(s) URL, or - for stdin')
    .option('--remote-kubeconfig <file>', 'provider kubeconfig file')
    .option('--remote-kubeconfig-namespace <ns>', `namespace of the Secret holding the provider kubeconfig (default ${KONNECTOR_NAMESPACE})`)
    .option('--remote-kubeconfig-name <name>', 'name of the Secret holding the provider kubeconfig (key "kubeconfig")')
    .option('--remote-namespace <ns>', "provider namespace (default: the provider kubeconfig's context namespace)")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out.write(s), writeErr: (s) => io.err.write(s) });
  kubeFlags(apiservice);
  apiservice.action(async (url: string | undefined, o: Record<string, unknown>) => {
    const file = (o.file as string | undefined) ?? url;
    if (!file) throw new CliError('missing the request: pass -f <file>, -f <url> or -f - (stdin)', Exit.USAGE);
    if (o.remoteKubeconfig && (o.remoteKubeconfigName || o.remoteKubeconfigNamespace)) {
      throw new CliError('--remote-kubeconfig and --remote-kubeconfig-namespace/--remote-kubeconfig-name are exclusive; pass one of them', Exit.USAGE);
    }
    if (!o.remoteKubeconfig && !o.remoteKubeconfigName) {
      throw new CliError('missing the provider kubeconfig: pass --remote-kubeconfig <file> or --remote-kubeconfig-name <secret>', Exit.USAGE);
    }
    const {
      bindApiService,
      clientFor,
      loadKubeConfig,
      parseAllowNamespaces,
      parseAllowResources,
      parseExportRequest,
      parseOutput,
      parseTimeout,
      printBindings,
      readRequestSource,
      safeClose,
    } = await load();
    const output = parseOutput(o.output as string | undefined);
    const allowResources = parseAllowResources(o.allowResource as string[]);
    const allowNamespaces = parseAllowNamespaces(o.allowNamespace as string[]);
    const timeoutMs = parseTimeout('--timeout', o.timeout as string);
    const request = parseExportRequest(await readRequestSource(file, io.in), file === '-' ? 'stdin' : file);
    const access = loadKubeConfig({ kubeconfig: o.kubeconfig as string, context: o.context as string });
    const consumer = clientFor(access);
    try {
      let remoteKubeconfig: string;
      let secretName: string | undefined;
      if (o.remoteKubeconfig) {
        const { readFileSync } = await import('node:fs');
        try {
          remoteKubeconfig = readFileSync(o.remoteKubeconfig as string, 'utf8');
        } catch (e) {
          throw new CliError(`--remote-kubeconfig: cannot read "${String(o.remoteKubeconfig)}": ${(e as Error).message}`, Exit.USAGE);
        }
      } else {
        const ns = (o.remoteKubeconfigNamespace as string | undefined) ?? KONNECTOR_NAMESPACE;
        if (ns !== KONNECTOR_NAMESPACE)
          throw new CliError(`--remote-kubeconfig-namespace: "${ns}"; the konnector reads kubeconfig Secrets from ${KONNECTOR_NAMESPACE} only`, Exit.USAGE);
        secretName = o.remoteKubeconfigName as string;
        const s = await consumer.getOrNull<KubeObject & { data?: Record<string, string> }>(
          { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' },
          ns,
          secretName,
        );
        if (!s?.data?.kubeconfig)
          throw new CliError(`Secret ${ns}/${secretName} does not exist or has no key "kubeconfig"; run "kubectl bind <url>" first`, Exit.USAGE);
        remoteKubeconfig = Buffer.from(s.data.kubeconfig, 'base64').toString('utf8');
      }
      const bindings = await bindApiService(request, {
        consumer,
        remoteKubeconfig,
        secretName,
        remoteNamespace: o.remoteNamespace as string | undefined,
        dryRun: o.dryRun as boolean,
        yes: o.yes as boolean,
        skipKonnector: o.skipKonnector as boolean,
        konnectorImage: o.konnectorImage as string | undefined,
        output,
        timeoutMs,
        allowResources,
        allowNamespaces,
        allNamespaces: o.allNamespaces as boolean,
        contextNamespace: access.namespace,
        io,
      });
      if (!o.dryRun) printBindings(bindings, output, io);
    } finally {
      safeClose(consumer);
    }
  });
  root.addCommand(apiservice);
  root.addCommand(revokeCommand(io, load));
  return root;
}

export async function run(argv: string[], io: IO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    await program(io, env).parseAsync(argv, { from: 'user' });
    return Exit.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0) return Exit.OK;
      return Exit.USAGE;
    }
    if (e instanceof CliError) {
      io.err.write(`❌ ${e.message}\n`);
      return e.code;
    }
    if (runtime && e instanceof runtime.ApiError) {
      io.err.write(`❌ ${e.message}\n${e.code === 0 ? 'Check that the cluster is reachable (--kubeconfig/--context).\n' : ''}`);
      return Exit.FAILED;
    }
    const verbose = Boolean(env.KUBECTL_BIND_DEBUG) || argv.includes('--verbose');
    const detail = verbose ? ((e as Error).stack ?? String(e)) : ((e as Error).message ?? String(e));
    io.err.write(`❌ ${detail}\nCheck the app cluster's kubeconfig (--kubeconfig/--context)${verbose ? '' : '; --verbose prints the stack trace'}.\n`);
    return Exit.FAILED;
  }
}

// Run directly (`tsx runtime/kubectl-bind/main.ts …`); the bin shim calls run() itself.
if (process.argv[1] && /runtime[\\/]kubectl-bind[\\/]main\.(ts|js)$/.test(process.argv[1])) {
  run(process.argv.slice(2), { out: process.stdout, err: process.stderr, in: process.stdin }).then((code) => {
    process.exitCode = code;
  });
}
