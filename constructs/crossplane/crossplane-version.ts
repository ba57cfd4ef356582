/**
 * `CrossplaneVersion`: the Crossplane releases klutch-kit supports (1.20 and 2.x), pinned to a patch version.
 */
import { fail, SEMVER } from './_util.js';

/**
 * A Crossplane release, pinned to a patch version. klutch-kit supports the 2.x line and 1.20.x
 * (the last v1 minor, which Klutch runs).
 */
export class CrossplaneVersion {
  /** Crossplane 2.3.4, the default. */
  public static readonly V2_3 = new CrossplaneVersion('2.3.4');
  /** Crossplane 2.2.4. */
  public static readonly V2_2 = new CrossplaneVersion('2.2.4');
  /** Crossplane 2.1.8. */
  public static readonly V2_1 = new CrossplaneVersion('2.1.8');
  /** Crossplane 2.0.8. */
  public static readonly V2_0 = new CrossplaneVersion('2.0.8');
  /** Crossplane 1.20.13, the final v1 minor (what Klutch runs). */
  public static readonly V1_20 = new CrossplaneVersion('1.20.13');

  /** Any supported release, e.g. `CrossplaneVersion.of('2.3.2')` or `'v1.20.0'`. */
  public static of(version: string): CrossplaneVersion {
    return new CrossplaneVersion(version);
  }

  /** The chart version (= Crossplane version without the `v`), e.g. `2.3.4`. */
  public readonly chartVersion: string;
  public readonly major: number;
  public readonly minor: number;
  public readonly patch: number;

  private constructor(version: string) {
    const m = typeof version === 'string' ? SEMVER.exec(version) : null;
    if (!m) fail('CrossplaneVersion', version, 'is not a semantic version such as "2.3.4"');
    this.major = Number(m[1]);
    this.minor = Number(m[2]);
    this.patch = Number(m[3]);
    this.chartVersion = version.replace(/^v/, '');
    if (!(this.major === 2 || (this.major === 1 && this.minor === 20))) {
      fail('CrossplaneVersion', version, 'is not supported: use 1.20.x or 2.x (v2 can only be reached from 1.20)');
    }
  }

  /** True for the 1.20 line. */
  public get isV1(): boolean {
    return this.major === 1;
  }

  /** `MAJOR.MINOR`. */
  public get minorLine(): string {
    return `${this.major}.${this.minor}`;
  }

  /** The image tag, `v<version>`. */
  public get imageTag(): string {
    return `v${this.chartVersion}`;
  }

  public toString(): string {
    return this.chartVersion;
  }
}
