/** A bare cluster chart for tests of the synth, its layout and its validator: objects are added to it by hand. */
import { Construct } from 'constructs';
import { ClusterChart, ClusterRole } from '../../constructs/topology/index.js';

export class TestCluster extends ClusterChart {
  public readonly clusterRole = ClusterRole.APP;
  constructor(scope: Construct, name: string) {
    super(scope, name, { clusterName: name }, 'TestCluster');
  }
}
