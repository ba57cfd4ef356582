// Exec credential plugins run as real child processes (small scripts written per test); the cluster
// side (tokens accepted, 401 refresh) is tested against a real kube-apiserver in
// test/integration/core/exec-credential.test.ts.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecCredentialError, ExecCredentialPlugin, parseExecConfig, type ExecConfig } from '../../../runtime/core/exec-credential.js';
import { KubeconfigLoadError, loadKubeconfigFile, parseKubeconfig, renderKubeconfig } from '../../../runtime/core/kubeconfig.js';
import { KubeconfigError, parseKubeconfigSecret } from '../../../runtime/konnector/kubeconfig.js';

// Each case starts real Node processes, one after the other: seconds on a loaded CI machine.
jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'exec-plugin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A node script as plugin; `body` sees `info` (parsed KUBERNETES_EXEC_INFO) and `runs` (this run's number). */
function plugin(body: string): { command: string; args: string[]; runsFile: string } {
  const file = join(dir, `plugin-${++n}.mjs`);
  const runsFile = join(dir, `runs-${n}`);
  writeFileSync(runsFile, '');
  writeFileSync(
    file,
    `import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(runsFile)}, 'x');
const runs = readFileSync(${JSON.stringify(runsFile)}, 'utf8').length;
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
${body}
`,
  );
  return { command: process.execPath, args: [file], runsFile };
}
const cred = (apiVersion: string, status: Record<string, unknown>) =>
  `process.stdout.write(JSON.stringify({ apiVersion: ${JSON.stringify(apiVersion)}, kind: 'ExecCredential', status: ${JSON.stringify(status)} }));`;
const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';
const config = (p: { command: string; args: string[] }, extra: Partial<ExecConfig> = {}): ExecConfig => ({
  apiVersion: V1,
  interactiveMode: 'Never',
  ...p,
  ...extra,
});

describe('ExecCredentialPlugin', () => {
  it('runs the plugin with KUBERNETES_EXEC_INFO and its env, returns the token, and caches it until expirationTimestamp', async () => {
    const p = plugin(
      `process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token: 'tok-' + runs + '-' + process.env.EXTRA + '-' + (info.spec.cluster?.server ?? 'none') + '-' + info.spec.interactive, expirationTimestamp: '2030-01-01T00:00:10Z' } }));`,
    );
    let now = Date.parse('2030-01-01T00:00:00Z');
    const x = new ExecCredentialPlugin(config(p, { env: [{ name: 'EXTRA', value: 'e' }], provideClusterInfo: true }), {
      cluster: { server: 'https://k:6443' },
      now: () => now,
    });
    expect((await x.credential()).token).toBe('tok-1-e-https://k:6443-false');
    now += 9_000;
    expect((await Promise.all([x.credential(), x.credential()])).map((c) => c.token)).toEqual(['tok-1-e-https://k:6443-false', 'tok-1-e-https://k:6443-false']);
    expect(x.runs).toBe(1);
    now += 1_000; // at the expiration time: run again
    expect((await x.credential()).token).toBe('tok-2-e-https://k:6443-false');
    expect(readFileSync(p.runsFile, 'utf8')).toBe('xx');
  });

  it('v1beta1 too; without an expiry the credential is kept until invalidated (a 401), concurrent callers share one run', async () => {
    const p = plugin(`process.stdout.write(JSON.stringify({ apiVersion: '${V1BETA1}', kind: 'ExecCredential', status: { token: 'beta-' + runs } }));`);
    const x = new ExecCredentialPlugin(config(p, { apiVersion: V1BETA1 }));
    const [a, b] = await Promise.all([x.credential(), x.credential()]);
    expect([a.token, b.token, x.runs]).toEqual(['beta-1', 'beta-1', 1]);
    x.invalidate({ token: 'some other credential' }); // not the cached one: kept
    expect((await x.credential()).token).toBe('beta-1');
    x.invalidate(a);
    expect((await x.credential()).token).toBe('beta-2');
  });

  it('a failing plugin is an error naming the command, its exit code and stderr', async () => {
    const p = plugin(`process.stderr.write('AccessDenied: not authorized to call sts\\n'); process.exit(3);`);
    const x = new ExecCredentialPlugin(config(p), { user: 'eks-user' });
    const e = await x.credential().catch((err: unknown) => err as Error);
    expect(e).toBeInstanceOf(ExecCredentialError);
    expect((e as Error).message).toBe(
      `exec credential plugin "${process.execPath} ${p.args[0]}" (kubeconfig user "eks-user") failed (exit code 3): AccessDenied: not authorized to call sts`,
    );
  });

  it('a hanging plugin is stopped after the timeout, with an error naming the command', async () => {
    const p = plugin(
      `writeFileSync(${JSON.stringify(join(dir, 'hang.pid'))}, String(process.pid)); process.stderr.write('waiting for device login'); setInterval(() => {}, 1000);`,
    );
    const x = new ExecCredentialPlugin(config(p), { timeoutMs: 700 });
    const e = await x.credential().catch((err: unknown) => err as Error);
    expect((e as Error).message).toBe(
      `exec credential plugin "${process.execPath} ${p.args[0]}" did not finish within 700 ms and was stopped; check that it runs without a terminal (try it in a shell); its stderr: waiting for device login`,
    );
    const pid = Number(readFileSync(join(dir, 'hang.pid'), 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  });

  it('refuses output that is no usable ExecCredential, naming what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      [`process.stdout.write('token=abc');`, /printed no ExecCredential JSON \(stdout starts "token=abc"\)/],
      [
        cred(V1BETA1, { token: 'a' }),
        /answered apiVersion "client.authentication.k8s.io\/v1beta1", but the kubeconfig asks for client.authentication.k8s.io\/v1/,
      ],
      [cred(V1, {}), /status has neither a token nor clientCertificateData with clientKeyData/],
      [cred(V1, { clientCertificateData: 'c' }), /clientCertificateData without clientKeyData/],
      [cred(V1, { token: 'a', expirationTimestamp: 'tomorrow' }), /expirationTimestamp "tomorrow" is not an RFC 3339 time/],
    ];
    for (const [body, msg] of cases) {
      await expect(new ExecCredentialPlugin(config(plugin(body))).credential()).rejects.toThrow(msg);
    }
  });

  it('a missing command names it and prints the install hint', async () => {
    const x = new ExecCredentialPlugin(
      config(
        { command: '/nonexistent/gke-gcloud-auth-plugin', args: [] },
        { installHint: 'Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin' },
      ),
    );
    await expect(x.credential()).rejects.toThrow(
      'exec credential plugin "/nonexistent/gke-gcloud-auth-plugin": command "/nonexistent/gke-gcloud-auth-plugin" not found; install it or fix users[].user.exec.command in the kubeconfig\nInstall gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin',
    );
  });

  it('parseExecConfig names bad fields', () => {
    expect(() => parseExecConfig({ command: 'aws' }, 'kc: user "u"')).toThrow(
      'kc: user "u": exec.apiVersion undefined is not supported; use client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1',
    );
    expect(() => parseExecConfig({ apiVersion: V1 }, 'kc')).toThrow('kc: exec.command is missing');
    expect(() => parseExecConfig({ apiVersion: V1, command: 'a', args: 'x' }, 'kc')).toThrow('kc: exec.args must be a list of strings');
    expect(() => parseExecConfig({ apiVersion: V1, command: 'a', env: [{ name: 'A' }] }, 'kc')).toThrow('kc: exec.env must be a list of {name, value} strings');
    expect(() => parseExecConfig({ apiVersion: V1, command: 'a', interactiveMode: 'Always' }, 'kc')).toThrow(
      /interactiveMode is Always, but klutch-kit runs plugins without a terminal/,
    );
  });
});

describe('kubeconfig with exec', () => {
  const kubeconfig = (exec: string) => `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster:
    server: https://127.0.0.1:6443
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: { audience: test }
users:
- name: u
  user:
    exec:
${exec}
contexts:
- name: c
  context: { cluster: k, user: u, namespace: ns }
`;

  it('a relative command with a path is resolved against the kubeconfig folder; cluster extension reaches the plugin', async () => {
    const sub = mkdtempSync(join(dir, 'kc-'));
    writeFileSync(
      join(sub, 'plugin.sh'),
      `#!/bin/sh\nprintf '{"apiVersion":"${V1}","kind":"ExecCredential","status":{"token":"%s"}}' "$(echo "$KUBERNETES_EXEC_INFO" | grep -o '"audience":"[a-z]*"' | tr -d '"')"\n`,
    );
    chmodSync(join(sub, 'plugin.sh'), 0o755);
    writeFileSync(
      join(sub, 'config'),
      kubeconfig(`      apiVersion: ${V1}\n      command: ./plugin.sh\n      provideClusterInfo: true\n      interactiveMode: Never`),
    );
    const a = loadKubeconfigFile(join(sub, 'config'));
    expect((await a.exec!.credential()).token).toBe('audience:test');
    // rendered back with its exec block
    expect(parseKubeconfig(renderKubeconfig(a), { allowExec: true }).exec?.config).toMatchObject({ command: './plugin.sh', apiVersion: V1 });
  });

  it("a kubeconfig that is no file the user gave (a Secret, a provider's answer) may not run a plugin", () => {
    const text = kubeconfig(`      apiVersion: ${V1}\n      command: /bin/sh\n      args: ["-c", "touch /tmp/pwned"]`);
    expect(() => parseKubeconfig(text, { source: 'Secret klutch-bind/kubeconfig-x' })).toThrow(
      'Secret klutch-bind/kubeconfig-x: user "u" runs the exec credential plugin "/bin/sh"; klutch-kit runs plugins only from kubeconfig files it is given (--kubeconfig, $KUBECONFIG), never from a kubeconfig received from a provider or read from a Secret; use a token or a client certificate there',
    );
    expect(parseKubeconfig(text, { allowExec: true }).exec?.commandLine).toBe('/bin/sh -c "touch /tmp/pwned"');
    // the konnector's provider kubeconfig Secret (which the provider can rotate): SecretValid=False
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kubeconfig-x', namespace: 'klutch-bind' },
      data: { kubeconfig: Buffer.from(text).toString('base64') },
    };
    let err: unknown;
    try {
      parseKubeconfigSecret(secret as never, { namespace: 'klutch-bind', name: 'kubeconfig-x', key: 'kubeconfig' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubeconfigError);
    expect(err).toMatchObject({
      reason: 'KubeconfigSecretInvalid',
      message: expect.stringMatching(/^Secret klutch-bind\/kubeconfig-x key "kubeconfig": user "u" runs the exec credential plugin "\/bin\/sh"/),
    });
  });

  it('bad exec blocks and auth-provider users are load errors naming the user', () => {
    expect(() => parseKubeconfig(kubeconfig('      command: aws'), { allowExec: true })).toThrow(KubeconfigLoadError);
    expect(() => parseKubeconfig(kubeconfig('      command: aws'), { allowExec: true })).toThrow(
      /kubeconfig: user "u": exec.apiVersion undefined is not supported/,
    );
    const ap = kubeconfig('      {}').replace('    exec:\n      {}', '    auth-provider: { name: gcp }');
    expect(() => parseKubeconfig(ap)).toThrow(/user "u" uses the auth-provider "gcp", which Kubernetes removed; use its exec plugin instead/);
  });
});
