import { describe, expect, it } from '@jest/globals';
import { CrossplaneVersion } from '../../constructs/crossplane/index.js';

describe('CrossplaneVersion', () => {
  it('pins patch versions of the supported lines', () => {
    expect(CrossplaneVersion.V2_3.chartVersion).toBe('2.3.4');
    expect(CrossplaneVersion.V2_3.imageTag).toBe('v2.3.4');
    expect(CrossplaneVersion.V2_3.isV1).toBe(false);
    expect(CrossplaneVersion.V1_20.chartVersion).toBe('1.20.13');
    expect(CrossplaneVersion.V1_20.isV1).toBe(true);
    expect(CrossplaneVersion.V1_20.minorLine).toBe('1.20');
    expect([CrossplaneVersion.V2_0, CrossplaneVersion.V2_1, CrossplaneVersion.V2_2].map(String)).toEqual(['2.0.8', '2.1.8', '2.2.4']);
    expect(CrossplaneVersion.of('v2.4.0').chartVersion).toBe('2.4.0');
    expect(CrossplaneVersion.of('1.20.0').patch).toBe(0);
  });

  it('rejects unsupported or malformed versions', () => {
    expect(() => CrossplaneVersion.of('1.19.3')).toThrow('CrossplaneVersion: "1.19.3" is not supported: use 1.20.x or 2.x');
    expect(() => CrossplaneVersion.of('3.0.0')).toThrow('CrossplaneVersion: "3.0.0" is not supported');
    expect(() => CrossplaneVersion.of('2.3')).toThrow('CrossplaneVersion: "2.3" is not a semantic version');
    expect(() => CrossplaneVersion.of('latest')).toThrow('CrossplaneVersion: "latest" is not a semantic version');
  });
});
