import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../runtime/core/client.js';
import { copyAnnotations, copyRecords, makerOf, ownership } from '../../../runtime/konnector/claim-ownership.js';
import {
  BINDING_UID_ANNOTATION,
  BOUND_ANNOTATION,
  RESOURCE_OWNER_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  SOURCE_UID_ANNOTATION,
} from '../../../runtime/konnector/types.js';

const A = 'uid-binding-a';
const B = 'uid-binding-b';

const secret = (uid: string, annotations?: Record<string, string>, resourceVersion = '7'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-service-binding', uid, resourceVersion, annotations }, data: { p: 'eA==' } }) as KubeObject;

/** The copy `binding` makes of `source` in direction `dir`, as ClaimSync writes it (then the API server gives it a uid). */
const copyOf = (source: KubeObject, dir: 'up' | 'down', binding: string, uid: string): KubeObject =>
  secret(uid, copyAnnotations(source.metadata.annotations, copyRecords(source, dir, binding)));

const decide = (up: KubeObject | undefined, down: KubeObject | undefined, binding: string, replaceExisting = false) =>
  ownership({ up, down, binding, replaceExisting });

describe('claim ownership per binding: a provider object copied down', () => {
  const upA = secret('up-a'); // provider A's object, in binding A's provider namespace
  const upB = secret('up-b'); // provider B's object of the same name, in binding B's provider namespace
  const copyA = copyOf(upA, 'down', A, 'down-1');

  it('the copy records the binding, the owner and the source', () => {
    expect(copyA.metadata.annotations).toEqual({
      [RESOURCE_OWNER_ANNOTATION]: 'Provider',
      [BOUND_ANNOTATION]: 'true',
      [BINDING_UID_ANNOTATION]: A,
      [SOURCE_UID_ANNOTATION]: 'up-a',
      [SOURCE_RESOURCE_VERSION_ANNOTATION]: '7',
    });
  });

  it('round trip: the binding that made the copy owns it; another binding holds off and contests it with its own object', () => {
    expect(decide(upA, copyA, A)).toEqual({ owner: 'Provider' });
    expect(decide(upB, copyA, B)).toEqual({ heldBy: A, contested: upB, direction: 'down' });
    // also with create.replaceExisting: another binding's copy is not a consumer object to replace
    expect(decide(upB, copyA, B, true)).toEqual({ heldBy: A, contested: upB, direction: 'down' });
  });

  it("another binding whose provider object is gone does not delete the copy (and contests nothing); the maker's own source gone deletes it", () => {
    expect(decide(undefined, copyA, B)).toEqual({ heldBy: A, contested: undefined, direction: 'down' });
    expect(decide(undefined, copyA, A)).toEqual({ owner: 'Provider' }); // ClaimSync deletes it: no source
  });

  it('another binding never takes the copy for a consumer object to push up', () => {
    // binding B with a consumer-owned claim of the same name: it neither pushes A's credentials up nor deletes them
    const o = decide(undefined, copyA, B);
    expect(o.owner).toBeUndefined();
    expect(o.heldBy).toBe(A);
  });

  it('a copy made before binding records (no binding-uid) is adopted only by the binding whose provider object it names', () => {
    const legacy = secret('down-1', { [RESOURCE_OWNER_ANNOTATION]: 'Provider', [SOURCE_UID_ANNOTATION]: 'up-a', [SOURCE_RESOURCE_VERSION_ANNOTATION]: '7' });
    expect(decide(upA, legacy, A)).toEqual({ owner: 'Provider' });
    expect(decide(upB, legacy, B)).toEqual({ heldBy: '', contested: upB, direction: 'down' });
    // whoever reconciles first: B never adopts it, so there is no race; after A's adoption B sees A's record
    const adopted = secret('down-1', copyAnnotations(legacy.metadata.annotations, copyRecords(upA, 'down', A)));
    expect(decide(upB, adopted, B)).toEqual({ heldBy: A, contested: upB, direction: 'down' });
    // no provider object to check it against (gone while no konnector ran): left alone, not deleted
    expect(decide(undefined, legacy, A)).toEqual({ heldBy: '', contested: undefined, direction: 'down' });
    // no source record at all: nobody's to adopt
    const bare = secret('down-2', { [RESOURCE_OWNER_ANNOTATION]: 'Provider' });
    expect(decide(upA, bare, A).owner).toBeUndefined();
  });

  it('records the provider puts on its own object do not survive the copy', () => {
    const forged = secret('up-b', {
      [BINDING_UID_ANNOTATION]: A,
      [SOURCE_UID_ANNOTATION]: 'up-a',
      [RESOURCE_OWNER_ANNOTATION]: 'Consumer',
      [BOUND_ANNOTATION]: 'false',
      [SOURCE_RESOURCE_VERSION_ANNOTATION]: '1',
      note: 'kept',
    });
    const copyB = copyOf(forged, 'down', B, 'down-3');
    expect(copyB.metadata.annotations).toEqual({
      note: 'kept',
      [RESOURCE_OWNER_ANNOTATION]: 'Provider',
      [BOUND_ANNOTATION]: 'true',
      [BINDING_UID_ANNOTATION]: B,
      [SOURCE_UID_ANNOTATION]: 'up-b',
      [SOURCE_RESOURCE_VERSION_ANNOTATION]: '7',
    });
    expect(decide(upA, copyB, A)).toEqual({ heldBy: B, contested: upA, direction: 'down' });
    expect(copyAnnotations(undefined, {})).toEqual({});
  });

  it('objects that are no copy keep the old rules', () => {
    const mine = secret('app-1'); // the app's own Secret
    expect(decide(upA, undefined, A)).toEqual({ owner: 'Provider' });
    expect(decide(undefined, mine, A)).toEqual({ owner: 'Consumer' });
    expect(decide(upA, mine, A)).toEqual({});
    expect(decide(upA, mine, A, true)).toEqual({ owner: 'Provider' });
    expect(decide(undefined, undefined, A)).toEqual({});
  });
});

describe('claim ownership per binding: an app-cluster object copied up', () => {
  const down = secret('app-1');
  const upCopyA = copyOf(down, 'up', A, 'up-copy-1');

  it('round trip: the copy names its app-cluster source and binding; only the binding that made it syncs it', () => {
    expect(upCopyA.metadata.annotations).toMatchObject({
      [RESOURCE_OWNER_ANNOTATION]: 'Consumer',
      [BINDING_UID_ANNOTATION]: A,
      [SOURCE_UID_ANNOTATION]: 'app-1',
    });
    expect(decide(upCopyA, down, A)).toEqual({ owner: 'Consumer' });
    // a second binding of the same provider connection (same provider namespace) contests it
    expect(decide(upCopyA, down, B)).toEqual({ heldBy: A, contested: down, direction: 'up' });
  });

  it('the app-cluster source gone: the maker deletes its copy upstream, another binding leaves it', () => {
    expect(decide(upCopyA, undefined, A)).toEqual({ owner: 'Consumer' });
    expect(decide(upCopyA, undefined, B)).toEqual({ heldBy: A, direction: 'up' });
    // an older konnector's copy (no binding record) of a gone object is cleaned up as before
    const legacy = secret('up-copy-2', { [RESOURCE_OWNER_ANNOTATION]: 'Consumer', [SOURCE_UID_ANNOTATION]: 'app-1' });
    expect(decide(legacy, undefined, B)).toEqual({ owner: 'Consumer' });
    expect(decide(legacy, down, B)).toEqual({ owner: 'Consumer' }); // adopted: its source is this app object
  });

  it('a provider that forges the records on its side cannot make the konnector push an app-cluster object up', () => {
    // The provider knows binding A's uid (it is on every copy pushed up) but not the uid of an object never pushed.
    const forged = secret('up-x', { [RESOURCE_OWNER_ANNOTATION]: 'Consumer', [BINDING_UID_ANNOTATION]: A });
    expect(decide(forged, down, A)).toEqual({});
    const wrongSource = secret('up-y', { [RESOURCE_OWNER_ANNOTATION]: 'Consumer', [BINDING_UID_ANNOTATION]: A, [SOURCE_UID_ANNOTATION]: 'other' });
    expect(decide(wrongSource, down, A)).toEqual({});
    expect(decide(wrongSource, down, B)).toEqual({});
  });
});

describe('makerOf', () => {
  it('this binding, another binding, or unrecorded; undefined for no copy of that owner', () => {
    const up = secret('up-a');
    expect(makerOf(secret('d', { [RESOURCE_OWNER_ANNOTATION]: 'Provider', [BINDING_UID_ANNOTATION]: A }), 'Provider', A, undefined)).toEqual({ self: true });
    expect(makerOf(secret('d', { [RESOURCE_OWNER_ANNOTATION]: 'Provider', [BINDING_UID_ANNOTATION]: B }), 'Provider', A, up)).toEqual({
      self: false,
      holder: B,
    });
    expect(makerOf(secret('d', { [RESOURCE_OWNER_ANNOTATION]: 'Provider', [SOURCE_UID_ANNOTATION]: 'up-a' }), 'Provider', A, up)).toEqual({ self: true });
    expect(makerOf(secret('d', { [RESOURCE_OWNER_ANNOTATION]: 'Provider', [SOURCE_UID_ANNOTATION]: 'up-a' }), 'Provider', A, undefined)).toEqual({
      self: false,
      holder: '',
    });
    expect(makerOf(secret('d', { [RESOURCE_OWNER_ANNOTATION]: 'Consumer' }), 'Provider', A, up)).toBeUndefined();
    expect(makerOf(secret('d'), 'Provider', A, up)).toBeUndefined();
    expect(makerOf(undefined, 'Provider', A, up)).toBeUndefined();
  });
});
