/**
 * runtime/realinfra/package-runtime.ts: when the Crossplane harness may start a package revision's runtime (the
 * revision installed its objects, on 2.x and on 1.20), which CRDs it waits to be served, and the loop that serves the
 * revisions once per change without overlapping runs.
 */
import { describe, expect, it } from '@jest/globals';
import { installedCrds, revisionInstalled, ServeLoop, type PackageRevision } from '../../runtime/realinfra/package-runtime.js';

const revision = (desiredState: string, conditions: Array<{ type: string; status: string }>, objectRefs?: unknown): PackageRevision => ({
  spec: { desiredState },
  status: { conditions, ...(objectRefs !== undefined ? { objectRefs } : {}) },
});

describe('revisionInstalled', () => {
  it('2.x: the active revision with RevisionHealthy True, whatever its runtime health', () => {
    expect(revisionInstalled(revision('Active', [{ type: 'RevisionHealthy', status: 'True' }]), true)).toBe(true);
    expect(
      revisionInstalled(
        revision('Active', [
          { type: 'RevisionHealthy', status: 'True' },
          { type: 'RuntimeHealthy', status: 'False' },
        ]),
        true,
      ),
    ).toBe(true);
  });

  it('2.x: not before the package manager installed the objects, nor for an inactive revision, nor on 1.20’s condition', () => {
    expect(revisionInstalled(revision('Active', [{ type: 'RevisionHealthy', status: 'False' }]), true)).toBe(false);
    expect(revisionInstalled(revision('Active', []), true)).toBe(false);
    expect(revisionInstalled(revision('Inactive', [{ type: 'RevisionHealthy', status: 'True' }]), true)).toBe(false);
    expect(revisionInstalled(revision('Active', [{ type: 'Healthy', status: 'True' }]), true)).toBe(false);
    expect(revisionInstalled({}, true)).toBe(false);
  });

  it('1.20: the active revision with Healthy True (1.20 has no RevisionHealthy)', () => {
    expect(revisionInstalled(revision('Active', [{ type: 'Healthy', status: 'True' }]), false)).toBe(true);
    expect(revisionInstalled(revision('Active', [{ type: 'Healthy', status: 'Unknown' }]), false)).toBe(false);
    expect(revisionInstalled(revision('Active', [{ type: 'RevisionHealthy', status: 'True' }]), false)).toBe(false);
  });
});

describe('installedCrds', () => {
  it('the CustomResourceDefinitions among the revision’s objectRefs, not its ManagedResourceDefinitions', () => {
    const rev = revision(
      'Active',
      [],
      [
        { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'providerconfigs.kubernetes.crossplane.io' },
        { apiVersion: 'apiextensions.crossplane.io/v1alpha1', kind: 'ManagedResourceDefinition', name: 'objects.kubernetes.crossplane.io' },
        { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'providerconfigusages.kubernetes.crossplane.io' },
        { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
      ],
    );
    expect(installedCrds(rev)).toEqual(['providerconfigs.kubernetes.crossplane.io', 'providerconfigusages.kubernetes.crossplane.io']);
  });

  it('none when the status has no objectRefs, or something else there', () => {
    expect(installedCrds(revision('Active', []))).toEqual([]);
    expect(installedCrds(revision('Active', [], 'not a list'))).toEqual([]);
  });
});

/** A serve function whose runs the test ends one by one. */
function controlledServe() {
  const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  let running = 0;
  let maxRunning = 0;
  const serve = () =>
    new Promise<void>((resolve, reject) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      pending.push({
        resolve: () => {
          running--;
          resolve();
        },
        reject: (e) => {
          running--;
          reject(e);
        },
      });
    });
  const settle = () => new Promise<void>((r) => setImmediate(r));
  return { serve, pending, settle, maxRunning: () => maxRunning };
}

describe('ServeLoop', () => {
  it('a kick serves at once; kicks during a run make exactly one more run, never two at a time', async () => {
    const s = controlledServe();
    const loop = new ServeLoop(s.serve, () => undefined);
    loop.kick();
    expect(s.pending).toHaveLength(1);
    loop.kick();
    loop.kick();
    loop.kick();
    expect(s.pending).toHaveLength(1);
    s.pending[0]!.resolve();
    await s.settle();
    expect(s.pending).toHaveLength(2);
    s.pending[1]!.resolve();
    await s.settle();
    expect(s.pending).toHaveLength(2);
    expect(s.maxRunning()).toBe(1);
    // idle again: the next kick serves at once
    loop.kick();
    expect(s.pending).toHaveLength(3);
    s.pending[2]!.resolve();
    await loop.stop();
  });

  it('a failed run goes to onError, the next good run to onSuccess; the loop keeps serving after a failure', async () => {
    const s = controlledServe();
    const seen: string[] = [];
    const loop = new ServeLoop(
      s.serve,
      (e) => seen.push(`error ${(e as Error).message}`),
      () => seen.push('ok'),
    );
    loop.kick();
    s.pending[0]!.reject(new Error('list failed'));
    await s.settle();
    loop.kick();
    s.pending[1]!.resolve();
    await s.settle();
    expect(seen).toEqual(['error list failed', 'ok']);
    await loop.stop();
  });

  it('stop: no run after it; it waits for the run in progress, and a kick it swallowed does not run', async () => {
    const s = controlledServe();
    const loop = new ServeLoop(s.serve, () => undefined);
    loop.kick();
    loop.kick();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await s.settle();
    expect(stopped).toBe(false);
    s.pending[0]!.resolve();
    await stopping;
    expect(s.pending).toHaveLength(1);
    loop.kick();
    expect(s.pending).toHaveLength(1);
  });
});
