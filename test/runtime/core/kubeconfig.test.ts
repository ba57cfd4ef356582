import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../../runtime/core/client.js';
import { KubeconfigLoadError, loadKubeconfigFile, parseKubeconfig, renderKubeconfig } from '../../../runtime/core/kubeconfig.js';

const yaml = (user: string, extraCluster = '') => `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: ${Buffer.from('CA').toString('base64')}
${extraCluster}
users:
- name: u
  user:
${user}
contexts:
- name: c
  context: { cluster: k, user: u, namespace: cluster-x }
`;

describe('kubeconfig loader', () => {
  it('reads server, CA, token and namespace of the current context', () => {
    const a = parseKubeconfig(yaml('    token: abc'));
    expect(a).toMatchObject({ server: 'https://127.0.0.1:6443', token: 'abc', namespace: 'cluster-x', context: 'c' });
    expect(a.caData?.toString()).toBe('CA');
    const c = KubeClient.fromKubeconfigString(yaml('    token: abc'));
    expect(c.contextNamespace).toBe('cluster-x');
    expect(c.server).toBe('https://127.0.0.1:6443');
  });
  it('resolves relative certificate files against the kubeconfig folder', () => {
    const d = mkdtempSync(join(tmpdir(), 'kc-'));
    try {
      writeFileSync(join(d, 'client.crt'), 'CERT');
      writeFileSync(join(d, 'client.key'), 'KEY');
      writeFileSync(join(d, 'config'), yaml('    client-certificate: client.crt\n    client-key: client.key'));
      const a = loadKubeconfigFile(join(d, 'config'));
      expect(a.certData?.toString()).toBe('CERT');
      expect(a.keyData?.toString()).toBe('KEY');
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
  it('round-trips through renderKubeconfig', () => {
    const a = parseKubeconfig(yaml('    token: abc'));
    expect(parseKubeconfig(renderKubeconfig(a))).toMatchObject({ server: a.server, token: 'abc', namespace: 'cluster-x' });
  });
  it('explains what is wrong', () => {
    expect(() => parseKubeconfig('apiVersion: v1\nkind: Config\n')).toThrow(/no current-context set/);
    expect(() => parseKubeconfig(yaml('    token: a'), { context: 'other' })).toThrow(/context "other" not found \(contexts: c\)/);
    expect(() => parseKubeconfig(yaml('    exec: { command: aws }'))).toThrow(KubeconfigLoadError);
    expect(() => parseKubeconfig(yaml('    exec: { command: aws }'))).toThrow(
      /user "u" runs the exec credential plugin "aws"; klutch-kit runs plugins only from kubeconfig files it is given/,
    );
    expect(() => loadKubeconfigFile('/nonexistent/kc')).toThrow(/kubeconfig \/nonexistent\/kc: cannot read it/);
  });
  it('refuses file references and proxies in a kubeconfig that is not a file of the user, naming field and value', () => {
    // The attack: a provider rewrites the kubeconfig Secret so that the konnector sends its own
    // ServiceAccount token to a server of the provider's choosing.
    const theft = yaml('    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token');
    expect(() => parseKubeconfig(theft, { source: 'Secret cluster-x/kubeconfig key "kubeconfig"' })).toThrow(
      /Secret cluster-x\/kubeconfig key "kubeconfig": user "u" tokenFile: "\/var\/run\/secrets\/kubernetes.io\/serviceaccount\/token"; a kubeconfig received from a provider or read from a Secret may carry inline data only/,
    );
    expect(() => parseKubeconfig(yaml('    client-certificate: /etc/kubernetes/pki/admin.crt\n    client-key: /etc/kubernetes/pki/admin.key'))).toThrow(
      /user "u" client-certificate: "\/etc\/kubernetes\/pki\/admin.crt", user "u" client-key: "\/etc\/kubernetes\/pki\/admin.key"/,
    );
    expect(() => parseKubeconfig(yaml('    token: t', '    certificate-authority: /root/.kube/ca.crt'))).toThrow(
      /cluster "k" certificate-authority: "\/root\/.kube\/ca.crt"/,
    );
    expect(() => parseKubeconfig(yaml('    token: t', '    proxy-url: http://127.0.0.1:3128'))).toThrow(/cluster "k" proxy-url: "http:\/\/127.0.0.1:3128"/);
    // inline data is what a provider hands over
    expect(parseKubeconfig(yaml('    token: t\n    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ'))).toMatchObject({ token: 't' });
  });
  it('honours file references in files of the user (and with allowFiles)', () => {
    const d = mkdtempSync(join(tmpdir(), 'kc-'));
    try {
      writeFileSync(join(d, 'token'), 'from-file');
      const text = yaml(`    tokenFile: ${join(d, 'token')}`);
      writeFileSync(join(d, 'config'), text);
      expect(loadKubeconfigFile(join(d, 'config')).tokenFile).toBe(join(d, 'token'));
      expect(parseKubeconfig(text, { allowFiles: true }).tokenFile).toBe(join(d, 'token'));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
