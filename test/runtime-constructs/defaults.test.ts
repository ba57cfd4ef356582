import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { DEFAULT_IMAGES, KLUTCH_KIT_VERSION } from '../../constructs/runtime/index.js';

describe('runtime defaults', () => {
  test('the runtime version equals the package version, and images are tagged with it', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    expect(KLUTCH_KIT_VERSION).toBe(pkg.version);
    expect(DEFAULT_IMAGES.konnector).toBe(`ghcr.io/klutch-kit/konnector:${pkg.version}`);
    expect(DEFAULT_IMAGES.backend).toBe(`ghcr.io/klutch-kit/backend:${pkg.version}`);
    for (const image of Object.values(DEFAULT_IMAGES)) expect(image).toMatch(/:[^:/]+$/);
  });
});
