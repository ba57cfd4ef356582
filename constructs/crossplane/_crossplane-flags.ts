/**
 * Flags of `crossplane core start` per minor version, read from `cmd/crossplane/core/core.go`
 * (startCommand, including aliases) and the global `--debug` at tags v1.20.11, v2.0.8, v2.1.8,
 * v2.2.4 and v2.3.4 of crossplane/crossplane. `removed` are hidden v1 flags that 2.x keeps only
 * to fail on start-up with an explanation.
 * @internal
 */
export const CORE_FLAGS: Record<string, { readonly flags: readonly string[]; readonly short: readonly string[]; readonly removed: readonly string[] }> = {
  '1.20': {
    flags: [
      'ca-bundle-path', 'cache-dir', 'debug', 'enable-composition-functions',
      'enable-composition-functions-extra-resources', 'enable-composition-revisions', 'enable-composition-webhook-schema-validation', 'enable-dependency-version-downgrades',
      'enable-dependency-version-upgrades', 'enable-deployment-runtime-configs', 'enable-environment-configs', 'enable-external-secret-stores',
      'enable-function-response-cache', 'enable-realtime-compositions', 'enable-signature-verification', 'enable-ssa-claims',
      'enable-usages', 'enable-webhooks', 'health-probe-port', 'leader-election',
      'max-concurrent-package-establishers', 'max-reconcile-rate', 'metrics-port', 'namespace',
      'package-runtime', 'poll-interval', 'profile', 'registry',
      'service-account', 'sync-interval', 'tls-client-certs-dir', 'tls-client-secret-name',
      'tls-server-certs-dir', 'tls-server-secret-name', 'user-agent', 'webhook-enabled',
      'webhook-port', 'xfn-cache-dir', 'xfn-cache-max-ttl', 'xpkg-cache-dir',
    ],
    short: ['c', 'd', 'l', 'n', 'r', 's'],
    removed: [],
  },
  '2.0': {
    flags: [
      'ca-bundle-path', 'cache-dir', 'debug', 'enable-custom-to-managed-resource-conversion',
      'enable-dependency-version-downgrades', 'enable-dependency-version-upgrades', 'enable-deployment-runtime-configs', 'enable-function-response-cache',
      'enable-operations', 'enable-realtime-compositions', 'enable-signature-verification', 'enable-ssa-claims',
      'enable-usages', 'enable-webhooks', 'health-probe-port', 'leader-election',
      'max-concurrent-package-establishers', 'max-reconcile-rate', 'metrics-port', 'namespace',
      'package-runtime', 'poll-interval', 'profile', 'service-account',
      'sync-interval', 'tls-client-certs-dir', 'tls-client-secret-name', 'tls-server-certs-dir',
      'tls-server-secret-name', 'user-agent', 'webhook-enabled', 'webhook-port',
      'xfn-cache-dir', 'xfn-cache-max-ttl', 'xpkg-cache-dir',
    ],
    short: ['c', 'd', 'l', 'n', 's'],
    removed: ['enable-composition-webhook-schema-validation', 'enable-external-secret-stores', 'registry'],
  },
  '2.1': {
    flags: [
      'ca-bundle-path', 'cache-dir', 'circuit-breaker-burst', 'circuit-breaker-cooldown',
      'circuit-breaker-refill-rate', 'debug', 'enable-custom-to-managed-resource-conversion', 'enable-dependency-version-downgrades',
      'enable-dependency-version-upgrades', 'enable-deployment-runtime-configs', 'enable-function-response-cache', 'enable-operations',
      'enable-realtime-compositions', 'enable-signature-verification', 'enable-ssa-claims', 'enable-usages',
      'enable-webhooks', 'health-probe-port', 'leader-election', 'max-concurrent-package-establishers',
      'max-concurrent-reconciles', 'max-reconcile-rate', 'metrics-port', 'namespace',
      'package-runtime', 'poll-interval', 'profile', 'service-account',
      'sync-interval', 'tls-client-certs-dir', 'tls-client-secret-name', 'tls-server-certs-dir',
      'tls-server-secret-name', 'user-agent', 'webhook-enabled', 'webhook-port',
      'xfn-cache-dir', 'xfn-cache-max-ttl', 'xpkg-cache-dir',
    ],
    short: ['c', 'd', 'l', 'n', 's'],
    removed: ['enable-composition-webhook-schema-validation', 'enable-external-secret-stores', 'registry'],
  },
  '2.2': {
    flags: [
      'ca-bundle-path', 'cache-dir', 'circuit-breaker-burst', 'circuit-breaker-cooldown',
      'circuit-breaker-refill-rate', 'debug', 'enable-custom-to-managed-resource-conversion', 'enable-dependency-version-downgrades',
      'enable-dependency-version-upgrades', 'enable-deployment-runtime-configs', 'enable-function-response-cache', 'enable-operations',
      'enable-pipeline-inspector', 'enable-realtime-compositions', 'enable-signature-verification', 'enable-ssa-claims',
      'enable-usages', 'enable-webhooks', 'health-probe-port', 'leader-election',
      'max-concurrent-package-establishers', 'max-concurrent-reconciles', 'max-reconcile-rate', 'metrics-port',
      'namespace', 'package-runtime', 'pipeline-inspector-socket', 'poll-interval',
      'profile', 'restrict-namespaced-events', 'service-account', 'sync-interval',
      'tls-client-certs-dir', 'tls-client-secret-name', 'tls-server-certs-dir', 'tls-server-secret-name',
      'user-agent', 'watch-cache-namespaced', 'webhook-enabled', 'webhook-port',
      'xfn-cache-dir', 'xfn-cache-max-ttl', 'xpkg-cache-dir',
    ],
    short: ['c', 'd', 'l', 'n', 's'],
    removed: ['enable-composition-webhook-schema-validation', 'enable-external-secret-stores', 'registry'],
  },
  '2.3': {
    flags: [
      'ca-bundle-path', 'cache-dir', 'circuit-breaker-burst', 'circuit-breaker-cooldown',
      'circuit-breaker-refill-rate', 'debug', 'enable-custom-to-managed-resource-conversion', 'enable-dependency-version-downgrades',
      'enable-dependency-version-upgrades', 'enable-deployment-runtime-configs', 'enable-function-response-cache', 'enable-operations',
      'enable-pipeline-inspector', 'enable-provider-deletion-protection', 'enable-realtime-compositions', 'enable-signature-verification',
      'enable-ssa-claims', 'enable-usages', 'enable-webhooks', 'health-probe-port',
      'leader-election', 'max-concurrent-package-establishers', 'max-concurrent-reconciles', 'max-reconcile-rate',
      'metrics-port', 'min-poll-interval', 'namespace', 'package-runtime',
      'pipeline-inspector-socket', 'poll-interval', 'profile', 'restrict-namespaced-events',
      'service-account', 'sync-interval', 'tls-client-certs-dir', 'tls-client-secret-name',
      'tls-server-certs-dir', 'tls-server-secret-name', 'user-agent', 'watch-cache-namespaced',
      'webhook-enabled', 'webhook-port', 'xfn-cache-dir', 'xfn-cache-max-ttl',
      'xpkg-cache-dir',
    ],
    short: ['c', 'd', 'l', 'n', 's'],
    removed: ['enable-composition-webhook-schema-validation', 'enable-external-secret-stores', 'registry'],
  },
};
