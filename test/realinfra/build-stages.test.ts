/**
 * The build stages of `npm run test:integration` (runtime/realinfra/build.ts, scripts/_lanes.ts): every component
 * in exactly one of the early, mid and late groups, and a suite that asks for a later stage's build fails at once,
 * naming the tag it lacks, instead of waiting for the build inside a jest hook.
 */
import { describe, expect, it } from '@jest/globals';
import {
  ALL_COMPONENTS,
  BUILDS_LATER_ENV,
  EARLY_COMPONENTS,
  LATE_COMPONENTS,
  MID_COMPONENTS,
  assertNotBuiltLater,
  ensureComponent,
} from '../../runtime/realinfra/build.js';
import { ensurePulumiComponent } from '../../runtime/realinfra/pulumi-build.js';

describe('realinfra build stages', () => {
  it('every component is in exactly one group; the early group is what a kube suite needs', () => {
    const groups = [EARLY_COMPONENTS, MID_COMPONENTS, LATE_COMPONENTS];
    for (const c of ALL_COMPONENTS) expect([c, groups.filter((g) => g.includes(c)).length]).toEqual([c, 1]);
    expect([...EARLY_COMPONENTS].sort()).toEqual(['crane', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl']);
    expect(MID_COMPONENTS).toEqual(['function-patch-and-transform', 'provider-kubernetes', 'crossplane-2.3']);
  });

  it('assertNotBuiltLater refuses a component of a later stage, naming it, the variable and the tags', () => {
    const env = { [BUILDS_LATER_ENV]: 'crossplane-2.3,kubelet' };
    expect(() => assertNotBuiltLater('etcd', env)).not.toThrow();
    expect(() => assertNotBuiltLater('crossplane-2.3', {})).not.toThrow();
    expect(() => assertNotBuiltLater('crossplane-2.3', env)).toThrow(
      `realinfra: crossplane-2.3 is built for a later stage of npm run test:integration (${BUILDS_LATER_ENV}), so a suite of this stage must not ask for it`,
    );
    expect(() => assertNotBuiltLater('kubelet', env)).toThrow(/"\/\/ @realinfra crossplane".*"\/\/ @realinfra late".*"\/\/ @realinfra pulumi"/);
  });

  it('ensureComponent and ensurePulumiComponent check it before anything else (even a warm cache)', async () => {
    const saved = process.env[BUILDS_LATER_ENV];
    process.env[BUILDS_LATER_ENV] = 'kubelet,pulumi-cli';
    try {
      await expect(ensureComponent('kubelet', { cacheRoot: '/nonexistent-cache' })).rejects.toThrow('realinfra: kubelet is built for a later stage');
      await expect(ensurePulumiComponent('pulumi-cli', { cacheRoot: '/nonexistent-cache' })).rejects.toThrow(
        'realinfra: pulumi-cli is built for a later stage',
      );
    } finally {
      if (saved === undefined) delete process.env[BUILDS_LATER_ENV];
      else process.env[BUILDS_LATER_ENV] = saved;
    }
  });
});
