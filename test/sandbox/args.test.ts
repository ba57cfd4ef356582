import { describe, expect, it } from '@jest/globals';
import { parseSandboxArgs, SandboxArgsError } from '../../sandbox/args.js';

describe('npm run sandbox: the command line', () => {
  it('defaults: up, the demo, claims, no a9s, no pods', () => {
    expect(parseSandboxArgs([])).toEqual({ command: 'up', demo: true, apiStyle: 'claims', a9s: false, pods: false });
  });

  it('takes each flag, and --api-style as two words or with =', () => {
    expect(parseSandboxArgs(['--pods'])).toMatchObject({ command: 'up', pods: true, apiStyle: 'claims' });
    expect(parseSandboxArgs(['--pods', '--no-demo'])).toMatchObject({ pods: true, demo: false });
    expect(parseSandboxArgs(['--pods', '--api-style', 'claims'])).toMatchObject({ pods: true, apiStyle: 'claims' });
    expect(parseSandboxArgs(['--a9s'])).toMatchObject({ a9s: true, pods: false });
    expect(parseSandboxArgs(['--api-style=namespaced'])).toMatchObject({ apiStyle: 'namespaced' });
    expect(parseSandboxArgs(['--api-style', 'namespaced', '--no-demo'])).toMatchObject({ apiStyle: 'namespaced', demo: false });
    expect(parseSandboxArgs(['--down'])).toEqual({ command: 'down', demo: true, apiStyle: 'claims', a9s: false, pods: false });
  });

  it('combines --pods, --a9s and --api-style namespaced freely', () => {
    expect(parseSandboxArgs(['--a9s', '--api-style', 'namespaced'])).toEqual({ command: 'up', demo: true, apiStyle: 'namespaced', a9s: true, pods: false });
    expect(parseSandboxArgs(['--pods', '--a9s', '--api-style', 'namespaced'])).toEqual({
      command: 'up',
      demo: true,
      apiStyle: 'namespaced',
      a9s: true,
      pods: true,
    });
    expect(parseSandboxArgs(['--pods', '--a9s'])).toEqual({ command: 'up', demo: true, apiStyle: 'claims', a9s: true, pods: true });
    expect(parseSandboxArgs(['--a9s', '--pods', '--no-demo'])).toEqual({ command: 'up', demo: false, apiStyle: 'claims', a9s: true, pods: true });
    expect(parseSandboxArgs(['--pods', '--api-style', 'namespaced'])).toEqual({ command: 'up', demo: true, apiStyle: 'namespaced', a9s: false, pods: true });
    expect(parseSandboxArgs(['--api-style=namespaced', '--pods'])).toEqual({ command: 'up', demo: true, apiStyle: 'namespaced', a9s: false, pods: true });
  });

  it.each([
    [['--down', '--pods'], 'sandbox: --down stops the running sandbox and takes no other flag (got --pods)'],
    [['--api-style'], 'sandbox: --api-style needs a value: claims or namespaced'],
    [['--api-style='], 'sandbox: --api-style needs a value: claims or namespaced'],
    [['--api-style', 'xr'], 'sandbox: --api-style: "xr" is not an API style'],
    [['--pod'], 'sandbox: unknown argument "--pod"; use --down, --no-demo, --a9s, --pods or --api-style claims|namespaced'],
  ])('refuses %j with a message naming the flag and the value', (argv, message) => {
    expect(() => parseSandboxArgs(argv)).toThrow(SandboxArgsError);
    expect(() => parseSandboxArgs(argv)).toThrow(message);
  });
});
