/** `klutch-kit` prints an error as one line; `--verbose` (before or after the subcommand) adds the stack trace. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { formatError, main } from '../../../runtime/cli/main.js';

describe('klutch-kit errors', () => {
  afterEach(() => {
    process.exitCode = undefined;
  });
  const run = async (...args: string[]) => {
    let out = '';
    await main(['node', 'klutch-kit', ...args], { write: (s: string) => (out += s) });
    return out;
  };
  it('one line by default, naming the problem', async () => {
    const out = await run('validate', '/nonexistent-klutch-kit-dir');
    expect(out).toMatch(/^klutch-kit: .*\/nonexistent-klutch-kit-dir.*\n$/);
    expect(out.split('\n')).toHaveLength(2);
    expect(process.exitCode).toBe(2);
  });
  it('the stack trace with --verbose', async () => {
    for (const args of [
      ['--verbose', 'validate', '/nonexistent-klutch-kit-dir'],
      ['validate', '/nonexistent-klutch-kit-dir', '--verbose'],
    ]) {
      const out = await run(...args);
      expect(out).toMatch(/^klutch-kit: \w*Error: .*nonexistent-klutch-kit-dir/);
      expect(out).toMatch(/\n {4}at /);
    }
  });
  it('formats non-Error values', () => {
    expect(formatError('boom', true)).toBe('klutch-kit: boom');
    expect(formatError(new Error('bad'), false)).toBe('klutch-kit: bad');
  });
});
