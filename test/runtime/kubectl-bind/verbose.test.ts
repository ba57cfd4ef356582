/** kubectl-bind prints an unexpected error as one line; `--verbose` (or $KUBECTL_BIND_DEBUG) adds the stack trace. */
import { describe, expect, it } from '@jest/globals';
import { run } from '../../../runtime/kubectl-bind/main.js';

describe('kubectl-bind unexpected errors', () => {
  // An output stream that fails: the error is neither a usage, a CLI nor an API error.
  const attempt = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    let err = '';
    const code = await run(
      argv,
      {
        out: {
          write: () => {
            throw new Error('stdout is gone');
          },
        } as never,
        err: {
          write: (s: string) => {
            err += s;
            return true;
          },
        } as never,
        in: process.stdin,
      },
      env,
    );
    return { code, err };
  };
  it('one message and a hint by default', async () => {
    const { code, err } = await attempt(['--help']);
    expect(code).not.toBe(0);
    expect(err).toBe("❌ stdout is gone\nCheck the app cluster's kubeconfig (--kubeconfig/--context); --verbose prints the stack trace.\n");
  });
  it('the stack trace with --verbose or KUBECTL_BIND_DEBUG', async () => {
    for (const [argv, env] of [
      [['--verbose', '--help'], {}],
      [['--help'], { KUBECTL_BIND_DEBUG: '1' }],
    ] as const) {
      const { err } = await attempt([...argv], env);
      expect(err).toMatch(/^❌ Error: stdout is gone\n {4}at /);
      expect(err).not.toContain('--verbose prints');
    }
  });
});
