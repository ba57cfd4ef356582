/**
 * klutch-kit's construct library, one namespace per module (as aws-cdk-lib does), so that names
 * shared by modules (e.g. `SecretKeyRef`) never clash:
 *
 * ```ts
 * import { topology, runtime, catalogue } from 'klutch-kit';
 * import { ControlPlaneCluster, DataService } from 'klutch-kit'; // the common ones by name
 * ```
 */
import './_node-version.js'; // first: the Node.js version check
export * as api from '../contract/api/index.js';
export * as catalogue from './catalogue/index.js';
export * as crossplane from './crossplane/index.js';
export * as dataservice from './dataservice/index.js';
export * as monitoring from './monitoring/index.js';
export * as runtime from './runtime/index.js';
export * as topology from './topology/index.js';
export * as validate from './validate/index.js';

// The commonly used constructs by name, so that `import { ControlPlaneCluster } from 'klutch-kit'`
// works; everything else stays in the namespaces above (no two of these names clash).
export {
  AppCluster,
  type AppClusterProps,
  ControlPlaneCluster,
  type ControlPlaneClusterProps,
  renderTopology,
  synthTopology,
  type SynthOptions,
  type SynthResult,
} from './topology/index.js';
export {
  A8sBackend,
  type A8sBackendProps,
  A9sBackend,
  type A9sBackendProps,
  Backend,
  credentialsSecretClaim,
  DataService,
  type DataServiceProps,
  type IDataService,
  Plan,
  type PlanProps,
  PlanTopology,
  Topology,
} from './dataservice/index.js';
export { Catalogue, type CatalogueProps } from './catalogue/index.js';
