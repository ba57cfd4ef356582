/**
 * The RuntimeImages component in an update: both images are pushed under the registry with the tag, and a registry
 * that stored another digest than the one built fails the update. The builder is a recording stand-in; the real build
 * and push are tested in test/integration/image/.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as pulumi from '@pulumi/pulumi';
import { RuntimeImages } from '../../stacks/images.js';
import { digest, recording } from './_runtime-images.js';

describe('RuntimeImages in an update', () => {
  beforeAll(async () => {
    await pulumi.runtime.setMocks({ newResource: (a) => ({ id: `${a.name}-id`, state: a.inputs }), call: (a) => a.inputs }, 'klutch-kit', 'update', false);
  });

  it('pushes both images under the registry and fails when the registry stored another digest', async () => {
    const ok = recording();
    await new RuntimeImages('ok', { registry: 'registry.example.com/klutch', tag: '1.2.3', builder: ok.builder }).refs;
    expect(ok.calls).toEqual([
      'build default',
      'push backend registry.example.com/klutch/backend:1.2.3',
      'push konnector registry.example.com/klutch/konnector:1.2.3',
    ]);
    const bad = recording(digest('9'));
    await expect(new RuntimeImages('bad', { registry: 'registry.example.com/klutch', tag: '1.2.3', builder: bad.builder }).refs).rejects.toThrow(
      `RuntimeImages bad: pushed backend as ${digest('9')}, built ${digest('1')}`,
    );
  });
});
