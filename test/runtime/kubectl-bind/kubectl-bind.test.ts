import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBindingResponse, newBindingResponse } from '../../../contract/wire.js';
import { CallbackServer } from '../../../runtime/kubectl-bind/callback.js';
import { askConsent, describeClaim, parseExportRequest } from '../../../runtime/kubectl-bind/apiservice.js';
import { clusterIdFor, newSessionId, parseOutput, parseRemoteKubeconfig, parseTimeout } from '../../../runtime/kubectl-bind/util.js';
import { run } from '../../../runtime/kubectl-bind/main.js';

const io = (stdin = '', tty = false) => {
  const out = new PassThrough();
  const err = new PassThrough();
  const inp = Object.assign(new PassThrough(), { isTTY: tty });
  inp.end(stdin);
  let o = '';
  let e = '';
  out.on('data', (d) => (o += d));
  err.on('data', (d) => (e += d));
  return { io: { out, err, in: inp }, text: () => ({ out: o, err: e }) };
};

const resp = (sid: string) =>
  newBindingResponse({
    sessionID: sid,
    identity: 'i/s',
    kubeconfig: 'x',
    requests: [{ metadata: { name: 'a.b' }, spec: { resources: [{ group: 'b', resource: 'a' }] } } as never],
  });

describe('callback server', () => {
  it('listens on 127.0.0.1, ignores answers for other sessions and junk, accepts ours', async () => {
    const cb = new CallbackServer('mine');
    await cb.start();
    try {
      expect(cb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect((await fetch(`${cb.url}?response=${encodeURIComponent(encodeBindingResponse(resp('other')))}`)).status).toBe(400);
      expect((await fetch(`${cb.url}?response=garbage!`)).status).toBe(400);
      expect((await fetch(cb.url.replace('/callback', '/other'))).status).toBe(404);
      expect(cb.refused).toHaveLength(2);
      const ok = await fetch(`${cb.url}?response=${encodeURIComponent(encodeBindingResponse(resp('mine')))}`);
      expect(ok.status).toBe(200);
      await expect(cb.response).resolves.toMatchObject({ authentication: { oauth2CodeGrant: { sid: 'mine' } } });
    } finally {
      await cb.stop();
    }
  });
});

describe('helpers', () => {
  it("cluster id is Klutch's: 6 base62 chars of sha224(uid), stable", () => {
    expect(clusterIdFor('1b4e28ba-2fa1-11d2-883f-0016d3cca427')).toMatch(/^[0-9a-zA-Z]{6}$/);
    expect(clusterIdFor('u')).toBe(clusterIdFor('u'));
    expect(newSessionId()).toMatch(/^[0-9a-zA-Z]{16}$/);
    expect(newSessionId()).not.toBe(newSessionId());
  });
  it('parses requests and names what is wrong', () => {
    expect(
      parseExportRequest('apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nspec:\n  resources:\n  - resource: things\n', 'f').spec
        .resources,
    ).toHaveLength(1);
    expect(() => parseExportRequest('kind: Pod\napiVersion: v1\n', 'f.yaml')).toThrow(
      /f.yaml: is v1\/Pod, expected klutch.anynines.com\/v1alpha1\/APIServiceExportRequest/,
    );
    expect(() => parseExportRequest('apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nspec: {resources: []}', 'f')).toThrow(
      /at least one/,
    );
    expect(() =>
      parseExportRequest('apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nspec: {resources: [{resource: Bad_Name}]}', 'f'),
    ).toThrow(/resources\[0\]\.resource: "Bad_Name"/);
    expect(() => parseOutput('xml')).toThrow(/-o\/--output: "xml"/);
    expect(parseTimeout('--timeout', '1m30s')).toBe(90_000);
    expect(() => parseTimeout('--timeout', 'later')).toThrow(/--timeout: "later"/);
    expect(() =>
      parseRemoteKubeconfig(
        'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://x"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: d, context: {cluster: c, user: u}}]\ncurrent-context: d\n',
      ),
    ).toThrow(/no namespace/);
  });
  it('consent: --yes accepts, a non-TTY without --yes refuses, a TTY asks per claim', async () => {
    const claims = [
      { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' as const } },
      { group: '', resource: 'configmaps', version: 'v1', required: true },
    ];
    expect(describeClaim(claims[0])).toBe('secrets created by the provider (synced into your cluster)');
    const a = io();
    await expect(askConsent(claims, { yes: true, io: a.io }, 'x.y')).resolves.toEqual([
      expect.objectContaining({ state: 'Accepted' }),
      expect.objectContaining({ state: 'Accepted' }),
    ]);
    const b = io();
    await expect(askConsent(claims, { yes: false, io: b.io }, 'x.y')).rejects.toMatchObject({ code: 5 });
    const c = io('n\ny\n', true);
    await expect(askConsent(claims, { yes: false, io: c.io }, 'x.y')).resolves.toEqual([
      expect.objectContaining({ resource: 'secrets', state: 'Rejected' }),
      expect.objectContaining({ resource: 'configmaps', state: 'Accepted' }),
    ]);
    const d = io('y\nn\n', true);
    await expect(askConsent(claims, { yes: false, io: d.io }, 'x.y')).rejects.toThrow(
      /configmaps created on either side \(synced both ways\) \[required\] is required by x.y; binding aborted, nothing was created/,
    );
  });
});

describe('exit codes', () => {
  it('2 for usage errors, with the fix in the message', async () => {
    const a = io();
    expect(await run([], a.io, {})).toBe(2);
    expect(a.text().err).toMatch(/missing <url>/);
    const b = io();
    expect(await run(['--bogus-flag'], b.io, {})).toBe(2);
    const c = io();
    expect(await run(['http://x/export', '--resource', 'a.b'], c.io, {})).toBe(2);
    expect(c.text().err).toMatch(/--resource is only used with --token/);
    // --token: each --resource checked, before the kubeconfig is read or the backend asked
    for (const [args, message] of [
      [[], /--resource: required with --token/],
      [['--resource', 'postgresqlinstances'], /--resource: "postgresqlinstances" is not <plural>\.<group>/],
      [['--resource', 'widgets.b', '--resource', 'Bad.b'], /--resource: "Bad\.b" is not <plural>\.<group>/],
      [['--resource', 'widgets.b', '--resource', 'widgets.b'], /--resource: "widgets\.b" is given twice/],
    ] as const) {
      const t = io();
      expect(await run(['http://x/export', '--kubeconfig', '/nonexistent-kubeconfig', '--token', 'a.b.c', ...args], t.io, {})).toBe(2);
      expect(t.text().err).toMatch(message);
    }
    const d = io();
    expect(await run(['apiservice', '-f', 'x.yaml', '--remote-kubeconfig', 'a', '--remote-kubeconfig-name', 'b'], d.io, {})).toBe(2);
    expect(d.text().err).toMatch(/are exclusive/);
    // flags after the subcommand belong to it
    const f = io();
    const file = join(mkdtempSync(join(tmpdir(), 'kb-')), 'req.yaml');
    writeFileSync(file, 'apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nspec: {resources: [{resource: things}]}\n');
    expect(await run(['apiservice', '-f', file, '--remote-kubeconfig', 'x', '--kubeconfig', '/nonexistent-kubeconfig'], f.io, {})).toBe(2);
    expect(f.text().err).toMatch(/--kubeconfig: cannot load "\/nonexistent-kubeconfig"/);
    const e = io();
    expect(await run(['--help'], e.io, {})).toBe(0);
    expect(e.text().out).toContain('apiservice');
  });
});
