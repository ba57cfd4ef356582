/**
 * `CatalogueInstall`: how a control plane's catalogue reaches Crossplane — as objects, or as a
 * Configuration package it installs.
 */
import { parsePackageRef } from '../crossplane/_package.js';

/** Props of installing the catalogue as a Crossplane Configuration package. */
export interface ConfigurationPackageInstallProps {
  /**
   * The package reference the Configuration installs (`spec.package`): where the package is pushed
   * with `klutch-kit package push <package>`, e.g. `registry.example.com/klutch/catalogue:v0.1.0`.
   */
  readonly package: string;
  /** Package name (`crossplane.yaml` metadata.name and the Configuration's name). @default 'klutch-catalogue' */
  readonly name?: string;
  /** Crossplane version constraint of the package. @default '>=v1.20.0' */
  readonly crossplaneVersion?: string;
  /** Install without resolving `dependsOn` (the function and providers are installed by the chart anyway). @default false */
  readonly skipDependencyResolution?: boolean;
}

/** How the catalogue's XRDs and Compositions reach Crossplane. */
export class CatalogueInstall {
  /** Every XRD and Composition is an object of the control plane's manifests (Klutch's way). */
  public static readonly OBJECTS = new CatalogueInstall('Objects');

  /**
   * The XRDs and Compositions go into a Configuration package instead (synth writes its source to
   * `<outdir>/<cluster>.packages/<name>/`; build and push it with `klutch-kit package build|push`),
   * and the control plane gets a `pkg.crossplane.io/v1 Configuration` installing it: Crossplane's
   * package manager extracts the API definitions. The package `dependsOn` the function and the
   * providers the Compositions use.
   */
  public static configurationPackage(props: ConfigurationPackageInstallProps): CatalogueInstall {
    const P = 'CatalogueInstall.configurationPackage(props)';
    if (!props || typeof props !== 'object')
      throw new Error(`${P}: ${JSON.stringify(props)} must be { package, name?, crossplaneVersion?, skipDependencyResolution? }`);
    parsePackageRef(`${P}.package`, props.package);
    return new CatalogueInstall('ConfigurationPackage', { ...props });
  }

  private constructor(
    /** `Objects` or `ConfigurationPackage`. */
    public readonly mode: 'Objects' | 'ConfigurationPackage',
    /** The package install props (ConfigurationPackage mode). */
    public readonly packageProps?: ConfigurationPackageInstallProps,
  ) {}
}
