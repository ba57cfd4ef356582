// The recording stand-in of the RuntimeImages builder, shared by the preview and update tests (the real build
// and push are tested in test/integration/image/).
import type { RuntimeImageBuilder } from '../../stacks/images.js';

export const digest = (c: string) => `sha256:${c.repeat(64)}`;

/** A builder that records its calls; `pushDigest` is what the "registry" answers for every push. */
export function recording(pushDigest?: string): { calls: string[]; builder: RuntimeImageBuilder } {
  const calls: string[] = [];
  return {
    calls,
    builder: {
      build: async ({ base }) => {
        calls.push(`build ${base ?? 'default'}`);
        return { backend: { digest: digest('1') }, konnector: { digest: digest('2') } };
      },
      push: async (_layout, name, ref) => {
        calls.push(`push ${name} ${ref}`);
        return { digest: pushDigest ?? (name === 'backend' ? digest('1') : digest('2')) };
      },
    },
  };
}
