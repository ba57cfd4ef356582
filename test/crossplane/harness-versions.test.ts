// The package versions the constructs emit by default are the ones the real-Crossplane harness builds and
// runs (runtime/realinfra: wrapper modules under tools/crossplane/).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PATCH_AND_TRANSFORM_PACKAGE, PROVIDER_KUBERNETES_PACKAGE } from '../../constructs/crossplane/index.js';
import { PATCH_AND_TRANSFORM_SOURCE, requiredVersion } from '../../runtime/realinfra/build.js';

const tag = (ref: string) => ref.slice(ref.lastIndexOf(':') + 1);
const pinned = (dir: string, mod: string) => requiredVersion(readFileSync(join('tools', 'crossplane', dir, 'go.mod'), 'utf8'), mod);

describe('default package versions', () => {
  it('function-patch-and-transform is the version the harness builds', () => {
    // The wrapper requires the v0.10.7 module at v0.10.8's dependency versions (tools/crossplane/function-patch-and-transform/go.mod).
    expect(pinned('function-patch-and-transform', 'github.com/crossplane-contrib/function-patch-and-transform')).toBe(PATCH_AND_TRANSFORM_SOURCE.module);
    expect(tag(PATCH_AND_TRANSFORM_PACKAGE)).toBe(PATCH_AND_TRANSFORM_SOURCE.version);
    expect(tag(PATCH_AND_TRANSFORM_PACKAGE)).toBe('v0.10.8');
  });

  it('provider-kubernetes is the version the harness builds', () => {
    expect(tag(PROVIDER_KUBERNETES_PACKAGE)).toBe(pinned('provider-kubernetes', 'github.com/crossplane-contrib/provider-kubernetes'));
    expect(tag(PROVIDER_KUBERNETES_PACKAGE)).toBe('v1.2.1');
  });
});
