/**
 * `Configuration`: installs a Crossplane Configuration package (`pkg.crossplane.io/v1`).
 */
import { Construct } from 'constructs';
import { PackageBase, PackageProps } from './package-base.js';

export interface ConfigurationProps extends PackageProps {}

/** A Crossplane configuration package (`pkg.crossplane.io/v1 Configuration`). */
export class Configuration extends PackageBase {
  constructor(scope: Construct, id: string, props: ConfigurationProps) {
    super(scope, id, 'Configuration', props, false);
  }
}
