/**
 * The RuntimeImages component in a preview (`pulumi.runtime.setMocks(…, preview = true)`): it builds but does not
 * push, and its references are pinned by the built digests. The builder is a recording stand-in; the real build and
 * push are tested in test/integration/image/ (the update path: runtime-images-update.test.ts).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as pulumi from '@pulumi/pulumi';
import { RuntimeImages } from '../../stacks/images.js';
import { digest, recording } from './_runtime-images.js';

describe('RuntimeImages in a preview', () => {
  beforeAll(async () => {
    await pulumi.runtime.setMocks({ newResource: (a) => ({ id: `${a.name}-id`, state: a.inputs }), call: (a) => a.inputs }, 'klutch-kit', 'preview', true);
  });

  it('builds without pushing and pins the references to the built digests', async () => {
    const { calls, builder } = recording();
    const images = new RuntimeImages('imgs', { registry: 'registry.example.com/klutch', tag: '1.2.3', base: 'local', builder });
    expect(await images.refs).toEqual({
      backend: `registry.example.com/klutch/backend:1.2.3@${digest('1')}`,
      konnector: `registry.example.com/klutch/konnector:1.2.3@${digest('2')}`,
    });
    expect(calls).toEqual(['build local']);
    expect(await new Promise((r) => images.konnector.apply(r))).toBe(`registry.example.com/klutch/konnector:1.2.3@${digest('2')}`);
    // the tags are known before the build; pins() maps each to its pinned reference
    expect(images.tags).toEqual({ backend: 'registry.example.com/klutch/backend:1.2.3', konnector: 'registry.example.com/klutch/konnector:1.2.3' });
    const pins = images.pins();
    expect(pins.refs).toEqual(['registry.example.com/klutch/backend:1.2.3', 'registry.example.com/klutch/konnector:1.2.3']);
    expect(await new Promise((r) => pins.pinned.apply(r))).toEqual({
      'registry.example.com/klutch/backend:1.2.3': `registry.example.com/klutch/backend:1.2.3@${digest('1')}`,
      'registry.example.com/klutch/konnector:1.2.3': `registry.example.com/klutch/konnector:1.2.3@${digest('2')}`,
    });
  });
});
