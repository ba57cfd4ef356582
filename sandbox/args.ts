/**
 * The command line of `npm run sandbox` (scripts/sandbox.ts): parsed without side effects, so that a unit test covers
 * every flag, value and refused command line.
 */

/** The API styles `--api-style` takes. */
export const SANDBOX_API_STYLES = ['claims', 'namespaced'] as const;

export interface SandboxArgs {
  /** `--down`: stop a running sandbox; else start one. */
  readonly command: 'up' | 'down';
  /** Provision the demo claims (not with `--no-demo`). */
  readonly demo: boolean;
  /** `--api-style claims|namespaced` (or `--api-style=…`). @default 'claims' */
  readonly apiStyle: (typeof SANDBOX_API_STYLES)[number];
  /** `--a9s`: also provider-anynines and the a9s broker stand-in. */
  readonly a9s: boolean;
  /** `--pods`: a real node on the control plane; backend, Dex, konnectors and Crossplane run as pods. */
  readonly pods: boolean;
}

/** A command line the sandbox refuses; the message names the flag and the value. */
export class SandboxArgsError extends Error {
  constructor(message: string) {
    super(`sandbox: ${message}`);
    this.name = 'SandboxArgsError';
  }
}

const FLAGS = ['--down', '--no-demo', '--a9s', '--pods'] as const;

/** Parses the sandbox's arguments (without `node` and the script); throws {@link SandboxArgsError}. */
export function parseSandboxArgs(argv: readonly string[]): SandboxArgs {
  let apiStyle: SandboxArgs['apiStyle'] | undefined;
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--api-style' || a.startsWith('--api-style=')) {
      const v = a === '--api-style' ? argv[++i] : a.slice('--api-style='.length);
      if (v === undefined || v === '') throw new SandboxArgsError('--api-style needs a value: claims or namespaced');
      if (!(SANDBOX_API_STYLES as readonly string[]).includes(v))
        throw new SandboxArgsError(`--api-style: ${JSON.stringify(v)} is not an API style; use --api-style claims or --api-style namespaced`);
      apiStyle = v as SandboxArgs['apiStyle'];
    } else if ((FLAGS as readonly string[]).includes(a)) flags.add(a);
    else throw new SandboxArgsError(`unknown argument ${JSON.stringify(a)}; use --down, --no-demo, --a9s, --pods or --api-style claims|namespaced`);
  }
  const pods = flags.has('--pods');
  const a9s = flags.has('--a9s');
  if (flags.has('--down') && (flags.size > 1 || apiStyle !== undefined)) {
    const others = [...flags].filter((f) => f !== '--down').concat(apiStyle !== undefined ? [`--api-style ${apiStyle}`] : []);
    throw new SandboxArgsError(`--down stops the running sandbox and takes no other flag (got ${others.join(', ')})`);
  }
  return { command: flags.has('--down') ? 'down' : 'up', demo: !flags.has('--no-demo'), apiStyle: apiStyle ?? 'claims', a9s, pods };
}
