import { describe, expect, it } from '@jest/globals';
import { ConnectionDetail } from '../../constructs/crossplane/index.js';
import { ptInputErrors } from './_schema.js';

describe('ConnectionDetail', () => {
  it('renders the three P&T connection detail types, valid for the input CRD', () => {
    const details = [
      ConnectionDetail.fromConnectionSecretKey('password'),
      ConnectionDetail.fromConnectionSecretKey('user', 'username'),
      ConnectionDetail.fromFieldPath('host', 'status.atProvider.endpoint'),
      ConnectionDetail.fromValue('port', '5432'),
    ];
    expect(details.map((d) => d.toJson())).toEqual([
      { name: 'password', type: 'FromConnectionSecretKey', fromConnectionSecretKey: 'password' },
      { name: 'user', type: 'FromConnectionSecretKey', fromConnectionSecretKey: 'username' },
      { name: 'host', type: 'FromFieldPath', fromFieldPath: 'status.atProvider.endpoint' },
      { name: 'port', type: 'FromValue', value: '5432' },
    ]);
    expect(
      ptInputErrors({
        apiVersion: 'pt.fn.crossplane.io/v1beta1',
        kind: 'Resources',
        resources: [{ name: 'r', connectionDetails: details.map((d) => d.toJson()) }],
      }),
    ).toEqual([]);
  });

  it('throws on bad keys, paths and values', () => {
    expect(() => ConnectionDetail.fromConnectionSecretKey('a b')).toThrow('ConnectionDetail.fromConnectionSecretKey(name): "a b" is not a valid Secret key');
    expect(() => ConnectionDetail.fromConnectionSecretKey('a', 'x/y')).toThrow('ConnectionDetail.fromConnectionSecretKey(fromKey): "x/y"');
    expect(() => ConnectionDetail.fromFieldPath('host', 'status..x')).toThrow('ConnectionDetail.fromFieldPath(fieldPath): "status..x"');
    expect(() => ConnectionDetail.fromValue('port', 5432 as unknown as string)).toThrow('ConnectionDetail.fromValue(value): 5432 must be a string');
  });
});
