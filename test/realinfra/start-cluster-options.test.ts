// startCluster() refuses bad options before it builds or starts anything.
import { describe, expect, it } from '@jest/globals';
import { startCluster } from '../../runtime/realinfra/index.js';

describe('startCluster options', () => {
  it('names a bad apiServerEnv entry and its value', async () => {
    await expect(startCluster({ name: 'opts', apiServerEnv: { 'GO MEMLIMIT': '1GiB' } })).rejects.toThrow(
      'startCluster: apiServerEnv.GO MEMLIMIT must be an environment variable name with a string value, got "1GiB"',
    );
    await expect(startCluster({ name: 'opts', apiServerEnv: { GOMEMLIMIT: 5 as unknown as string } })).rejects.toThrow('apiServerEnv.GOMEMLIMIT');
  });
});
