/**
 * What a backend replica's `/readyz` says about its controllers.
 *
 * Ready means "can serve HTTP" (the Service sends it requests), which needs no controller:
 * - without controllers (`--no-controllers`): ready;
 * - without leader election the one replica runs the controllers, and is ready once they have synced
 *   (a start-up gate: nobody else reconciles);
 * - with leader election every replica is ready, the leader too while the controllers it just started
 *   sync. Answering 503 then would take the replica that just took over out of the Service — in a
 *   two-replica set, while the other one is being replaced, the only one there is.
 *
 * `controllersSynced` is the `controllers:` line: false only while this replica should run controllers
 * and they have not synced.
 */
export interface ControllerReadiness {
  readonly ready: boolean;
  readonly controllersSynced: boolean;
}

export function controllerReadiness(
  controllers: { hasSynced(): boolean } | undefined,
  elector: { readonly isLeader: boolean } | undefined,
): ControllerReadiness {
  if (!controllers) return { ready: true, controllersSynced: true };
  if (!elector) {
    const synced = controllers.hasSynced();
    return { ready: synced, controllersSynced: synced };
  }
  return { ready: true, controllersSynced: !elector.isLeader || controllers.hasSynced() };
}
