// Unit tests (no cluster) of runtime/realinfra/apply.ts: its pure parts, and the CRD wait on the fake API server.
import { afterEach, describe, expect, it } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { APPLY_ORDER, objectRef, readManifests, sortForApply, waitForCrdsEstablished } from '../../runtime/realinfra/apply.js';
import { FakeApiServer } from '../support/fake-api-server.js';

const obj = (kind: string, name: string, namespace?: string) => ({ apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

describe('sortForApply', () => {
  it("puts kinds in Helm's install order, custom resources last, stable within a kind", () => {
    const sorted = sortForApply([
      obj('Widget', 'w1'),
      obj('Deployment', 'd'),
      obj('Widget', 'w2'),
      obj('CustomResourceDefinition', 'c'),
      obj('Namespace', 'n'),
      obj('ClusterRole', 'r'),
    ]);
    expect(sorted.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/n',
      'CustomResourceDefinition/c',
      'ClusterRole/r',
      'Deployment/d',
      'Widget/w1',
      'Widget/w2',
    ]);
    expect(APPLY_ORDER.indexOf('Namespace')).toBeLessThan(APPLY_ORDER.indexOf('CustomResourceDefinition'));
  });

  it('names objects as Kind/namespace/name', () => {
    expect(objectRef(obj('ConfigMap', 'c', 'ns'))).toBe('ConfigMap/ns/c');
    expect(objectRef(obj('Namespace', 'n'))).toBe('Namespace/n');
  });
});

describe('readManifests', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads every YAML/JSON document under a folder in path order, flattening Lists', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-test-manifests-'));
    fs.mkdirSync(path.join(dir, '10-apps'));
    fs.writeFileSync(
      path.join(dir, '00-base.yaml'),
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: a\n',
    );
    fs.writeFileSync(path.join(dir, '10-apps', 'list.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [obj('Secret', 's', 'a')] }));
    fs.writeFileSync(path.join(dir, 'README.md'), '# not a manifest');
    expect(readManifests(dir).map(objectRef)).toEqual(['Namespace/a', 'ConfigMap/a/c', 'Secret/a/s']);
  });

  it('names the file and document of something that is not a Kubernetes object', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-test-manifests-'));
    const f = path.join(dir, 'bad.yaml');
    fs.writeFileSync(f, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\njust: data\n');
    expect(() => readManifests(dir!)).toThrow(`readManifests: ${f} document 2 is not a Kubernetes object`);
  });
});

describe('waitForCrdsEstablished', () => {
  const NAME = 'kiwidbs.kiwi.example';
  const crd = (conditions: Array<{ type: string; status: string; message?: string }>) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: NAME },
    spec: {
      group: 'kiwi.example',
      names: { plural: 'kiwidbs' },
      versions: [
        { name: 'v1alpha1', served: true, storage: false },
        { name: 'v1', served: true, storage: true },
      ],
    },
    status: { conditions },
  });
  /** A fake API server whose CRD is Established and whose list of it always fails with `code`. */
  const establishedListFailing = (code: number, reason: string, message: string) =>
    new FakeApiServer()
      .answer('GET', /customresourcedefinitions\//, () => crd([{ type: 'Established', status: 'True' }]))
      .answer('GET', /^\/apis\/kiwi\.example\//, (m, p) => {
        throw FakeApiServer.error(code, reason, message, m, p);
      });
  const lists = (api: FakeApiServer) => api.calls.filter((c) => c.verb === 'request' && c.resource.startsWith('/apis/kiwi.example/'));

  it('waits past Established until the API server serves the storage version', async () => {
    const api = new FakeApiServer();
    let answered = 0;
    api.answer('GET', /customresourcedefinitions\/kiwidbs\.kiwi\.example$/, () => crd([{ type: 'Established', status: 'True' }]));
    // a just-Established CRD whose handler the API server has yet to start: 404, then 429, then served
    api.answer('GET', /^\/apis\/kiwi\.example\/v1\/kiwidbs\?limit=1$/, (m, p) => {
      answered++;
      if (answered === 1) throw FakeApiServer.error(404, 'NotFound', '404 page not found', m, p);
      if (answered === 2) throw FakeApiServer.error(429, 'TooManyRequests', 'storage is (re)initializing', m, p);
      return { items: [] };
    });
    await waitForCrdsEstablished(api.client, [NAME], 10_000);
    expect(lists(api).map((c) => c.resource)).toEqual(Array(3).fill('/apis/kiwi.example/v1/kiwidbs?limit=1'));
  });

  it('names the CRD and what the API server answered when it is not served in time', async () => {
    const api = establishedListFailing(404, 'NotFound', '404 page not found');
    await expect(waitForCrdsEstablished(api.client, [NAME], 300)).rejects.toThrow(
      `CustomResourceDefinition/${NAME} not Established and served within 0.3 s; Established, but GET /apis/kiwi.example/v1/kiwidbs answered 404 404 page not found`,
    );
  });

  it('fails at once on NamesAccepted=False, with its message', async () => {
    const api = new FakeApiServer();
    api.answer('GET', /customresourcedefinitions\//, () =>
      crd([
        { type: 'NamesAccepted', status: 'False', message: '"kiwidbs" is already in use' },
        { type: 'Established', status: 'False' },
      ]),
    );
    await expect(waitForCrdsEstablished(api.client, [NAME], 60_000)).rejects.toThrow(
      `CustomResourceDefinition/${NAME}: names not accepted: "kiwidbs" is already in use`,
    );
    expect(lists(api)).toEqual([]);
  });

  it('a list that fails otherwise ends the wait with the API server’s answer', async () => {
    const api = establishedListFailing(403, 'Forbidden', 'kiwidbs.kiwi.example is forbidden');
    await expect(waitForCrdsEstablished(api.client, [NAME], 60_000)).rejects.toThrow(
      `CustomResourceDefinition/${NAME}: listing it failed: 403 kiwidbs.kiwi.example is forbidden`,
    );
  });
});
