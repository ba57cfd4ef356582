/**
 * export (key: `clusterNs/name`): keeps each APIServiceExport in sync with its CRD (hash compare),
 * `ProviderInSync`; deletes the export when its CRD is gone.
 */
import type { Logger } from 'pino';
import { conditionsEqual, setCondition, type ObjectCache, type Reconciler } from '../../core/index.js';
import type { Crd } from '../catalog.js';
import { crdSpecHash, exportSpecFromCrd } from '../export.js';
import { R, SOURCE_SPEC_HASH_ANNOTATION } from '../refs.js';
import { type APIServiceExport, type ReconcilerKube } from './types.js';
import { splitKey } from '../../core/client.js';
import { ConditionType } from '../../../contract/api/constants.js';

export interface ExportReconcilerDeps {
  readonly kube: ReconcilerKube;
  readonly exports: ObjectCache<APIServiceExport>;
  readonly crds: ObjectCache<Crd>;
  readonly logger: Logger;
}

export class ExportReconciler implements Reconciler {
  constructor(private readonly d: ExportReconcilerDeps) {}

  async reconcile(key: string): Promise<void> {
    const d = this.d;
    const exp = d.exports.get(key);
    if (!exp || exp.metadata.deletionTimestamp) return;
    const { namespace: ns = '', name } = splitKey(key);
    const crd = d.crds.getByName(undefined, name);
    if (!crd) {
      d.logger.info({ export: key }, 'CRD of export is gone; deleting the export');
      await d.kube.delete(R.exports, ns, name, { uid: exp.metadata.uid });
      return;
    }
    const hash = crdSpecHash(crd);
    if (exp.metadata.annotations?.[SOURCE_SPEC_HASH_ANNOTATION] !== hash) {
      const spec = exportSpecFromCrd(crd, { informerScope: exp.spec.informerScope, permissionClaims: exp.spec.permissionClaims });
      await d.kube.update(R.exports, {
        ...exp,
        metadata: { ...exp.metadata, annotations: { ...exp.metadata.annotations, [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
        spec,
      });
      d.logger.info({ export: key }, 'export updated from its changed CRD');
      return; // the update event reconciles the status
    }
    const conds = setCondition(exp.status?.conditions, {
      type: ConditionType.ProviderInSync,
      status: 'True',
      reason: 'InSync',
      message: `in sync with CustomResourceDefinition ${name}`,
    });
    if (!conditionsEqual(conds, exp.status?.conditions)) {
      await d.kube.updateStatus(R.exports, { ...exp, status: { ...exp.status, conditions: conds } });
    }
  }
}
