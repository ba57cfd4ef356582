/**
 * `kubectl bind revoke`: ends a provider credential at once. With the credential itself it deletes the
 * Secret `credential` in its cluster namespace on the provider (the one object the consumer may delete
 * there, contract/binder-rbac.ts); every token of the credential is bound to that Secret, so all of them
 * are invalid from then on, rotated ones included. Binding again (`kubectl bind <url>`) needs the OIDC
 * login, which a thief of the credential does not have.
 */
import { Command } from 'commander';
import type { KubeClient, KubeObject } from '../core/index.js';
import type { ClusterAccess } from '../core/kubeconfig.js';
import { CREDENTIAL_SECRET } from '../../contract/binder-rbac.js';
import { CliError, Exit, PROVIDER_KUBECONFIG_LABEL } from './exit.js';
import { KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';
import type { IO } from './apiservice.js';

const SECRETS = { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' } as const;

export interface RevokeOptions {
  /** The provider kubeconfig text (from the app cluster's Secret or a file). */
  readonly remoteKubeconfig: string;
  /** Where it came from, for messages. */
  readonly source: string;
  readonly io: IO;
}

/** Deletes the credential Secret on the provider with the credential itself. */
export async function revokeCredential(o: RevokeOptions): Promise<void> {
  // loaded here, not at the top: they need the runtime peers, which --help does not (see main.ts)
  const { ApiError, KubeClient } = await import('../core/index.js');
  const { KubeconfigLoadError, parseKubeconfig } = await import('../core/kubeconfig.js');
  let access: ClusterAccess;
  try {
    access = parseKubeconfig(o.remoteKubeconfig, { source: o.source });
  } catch (e) {
    if (e instanceof KubeconfigLoadError) throw new CliError(`${o.source}: ${e.message}`, Exit.USAGE);
    throw e;
  }
  if (!access.namespace)
    throw new CliError(`${o.source}: its context names no namespace (the cluster namespace on the provider); is it a provider kubeconfig?`, Exit.USAGE);
  const provider = new KubeClient(access, { userAgent: 'kubectl-bind', qps: 5, burst: 5 });
  const where = `Secret ${access.namespace}/${CREDENTIAL_SECRET} on ${access.server}`;
  try {
    await provider.delete(SECRETS, access.namespace, CREDENTIAL_SECRET, { ignoreNotFound: false });
  } catch (e) {
    if (e instanceof ApiError && e.code === 401) {
      o.io.out.write(`The credential of ${o.source} is already invalid (revoked, replaced by a newer bind, or past its maximum life).\n`);
      return;
    }
    if (e instanceof ApiError && e.code === 404) {
      throw new CliError(`${where} not found: the credential was already revoked, or the provider's backend does not support revocation`, Exit.FAILED);
    }
    if (e instanceof ApiError && e.code === 403) {
      throw new CliError(`${where}: the provider does not let this credential delete it (403); ask the provider to revoke it`, Exit.FAILED);
    }
    throw e;
  } finally {
    provider.close();
  }
  o.io.out.write(
    `Revoked the credential of ${o.source} (cluster namespace ${access.namespace} on ${access.server}): every token of it is invalid now.\n` +
      `The konnector's bindings of this provider stop working; run "kubectl bind <url>" to bind again.\n`,
  );
}

/** The one provider kubeconfig Secret in klutch-bind, or the named one; its text. */
export async function kubeconfigFromSecret(consumer: KubeClient, name: string | undefined): Promise<{ text: string; source: string }> {
  const get = (n: string) => consumer.getOrNull<KubeObject & { data?: Record<string, string> }>(SECRETS, KONNECTOR_NAMESPACE, n);
  let secret: (KubeObject & { data?: Record<string, string> }) | undefined;
  if (name) {
    secret = await get(name);
    if (!secret) throw new CliError(`--remote-kubeconfig-name: Secret ${KONNECTOR_NAMESPACE}/${name} not found in the app cluster`, Exit.USAGE);
  } else {
    const list = await consumer.list<KubeObject & { data?: Record<string, string> }>(SECRETS, KONNECTOR_NAMESPACE, {
      labelSelector: `${PROVIDER_KUBECONFIG_LABEL}=true`,
    });
    if (list.items.length !== 1) {
      const names = list.items.map((s) => s.metadata.name).join(', ');
      throw new CliError(
        list.items.length
          ? `${list.items.length} provider kubeconfig Secrets in ${KONNECTOR_NAMESPACE} (${names}); pass --remote-kubeconfig-name <secret>`
          : `no provider kubeconfig Secret in ${KONNECTOR_NAMESPACE}; pass --remote-kubeconfig-name <secret> or --remote-kubeconfig <file>`,
        Exit.USAGE,
      );
    }
    secret = list.items[0];
  }
  const data = secret.data?.kubeconfig;
  if (!data) throw new CliError(`Secret ${KONNECTOR_NAMESPACE}/${secret.metadata.name} has no key "kubeconfig"`, Exit.USAGE);
  return { text: Buffer.from(data, 'base64').toString('utf8'), source: `Secret ${KONNECTOR_NAMESPACE}/${secret.metadata.name}` };
}

/** What the command needs of the runtime, loaded once the arguments are parsed (main.ts `load`). */
export interface RevokeRuntime {
  loadKubeConfig(flags: { kubeconfig?: string; context?: string }): ClusterAccess;
  clientFor(access: ClusterAccess): KubeClient;
  safeClose(c: KubeClient): void;
}

/** The `revoke` subcommand. */
export function revokeCommand(io: IO, load: () => Promise<RevokeRuntime>): Command {
  return new Command('revoke')
    .description('Revoke a provider credential at once: every token of it (and of its rotations) stops working. Bind again with "kubectl bind <url>".')
    .option('--kubeconfig <file>', 'kubeconfig of the app cluster (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context of the app cluster')
    .option('--remote-kubeconfig-name <name>', `the Secret in ${KONNECTOR_NAMESPACE} holding the provider kubeconfig (default: the only one there)`)
    .option('--remote-kubeconfig <file>', 'a provider kubeconfig file instead of the Secret')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out.write(s), writeErr: (s) => io.err.write(s) })
    .action(async (o: Record<string, string | undefined>) => {
      if (o.remoteKubeconfig && o.remoteKubeconfigName) {
        throw new CliError('--remote-kubeconfig and --remote-kubeconfig-name are exclusive; pass one of them', Exit.USAGE);
      }
      if (o.remoteKubeconfig) {
        const { readFileSync } = await import('node:fs');
        let text: string;
        try {
          text = readFileSync(o.remoteKubeconfig, 'utf8');
        } catch (e) {
          throw new CliError(`--remote-kubeconfig: cannot read "${o.remoteKubeconfig}": ${(e as Error).message}`, Exit.USAGE);
        }
        return revokeCredential({ remoteKubeconfig: text, source: o.remoteKubeconfig, io });
      }
      const { clientFor, loadKubeConfig, safeClose } = await load();
      const consumer = clientFor(loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }));
      try {
        const { text, source } = await kubeconfigFromSecret(consumer, o.remoteKubeconfigName);
        await revokeCredential({ remoteKubeconfig: text, source, io });
      } finally {
        safeClose(consumer);
      }
    });
}
