import { describe, expect, it } from '@jest/globals';
import { installedNamespaces, installedSecretTypes } from '../../../runtime/kubectl-bind/apiservice.js';

describe("kubectl bind keeps the installed konnector's allow-lists when it re-renders the konnector", () => {
  it('keeps --allow-namespace (so the Secret rights stay narrowed to those namespaces), sorted and without repeats', () => {
    const warnings: string[] = [];
    const args = ['--lease-name=klutch-bind', '--allow-namespace=team-b', '--allow-namespace=team-a', '--allow-namespace=team-b'];
    expect(installedNamespaces(args, (m) => warnings.push(m))).toEqual(['team-a', 'team-b']);
    expect(warnings).toEqual([]);
  });

  it('drops a value the contract refuses, with a warning naming the flag and the value', () => {
    const warnings: string[] = [];
    expect(installedNamespaces(['--allow-namespace=kube-system', '--allow-namespace=team-a'], (m) => warnings.push(m))).toEqual(['team-a']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('--allow-namespace=kube-system');
    expect(warnings[0]).toContain('is a system namespace');
  });

  it('keeps --allow-secret-type the same way', () => {
    expect(installedSecretTypes(['--allow-secret-type=kubernetes.io/dockerconfigjson'], () => undefined)).toEqual(['kubernetes.io/dockerconfigjson']);
    expect(installedNamespaces(undefined, () => undefined)).toEqual([]);
  });
});
