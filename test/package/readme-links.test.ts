/**
 * The links of README.md resolve on npmjs.com (scripts/_readme-links.ts): `repository` is the GitHub
 * repository relative links resolve against, every linked file is in the repository and every anchor
 * names a heading. `npm run test:package` runs the same check on the README inside the tarball.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { anchorsOf, brokenReadmeLinks, headingAnchor, markdownLinks } from '../../scripts/_readme-links.js';

const ROOT = process.cwd();
/** A file (its text) or folder ('') of the repository. */
const repoFile = (p: string): string | undefined => {
  const abs = join(ROOT, p);
  if (!existsSync(abs)) return undefined;
  return statSync(abs).isDirectory() ? '' : readFileSync(abs, 'utf8');
};

describe("the package README's links", () => {
  it('resolve on npm: a GitHub repository, files that exist, anchors that name headings', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository?: { url?: string } };
    expect(brokenReadmeLinks(readFileSync(join(ROOT, 'README.md'), 'utf8'), pkg, repoFile)).toEqual([]);
  });

  it('reports a missing file, a missing anchor and a missing repository (the check can fail)', () => {
    const readme =
      '# T\n\n## A `b` c\n\n[x](#a-b-c) [y](#nope) [z](docs/none.md) ![i](docs/images/topology.svg) [w](https://x.test/)\n```\n[q](gone.md)\n```\n';
    expect(markdownLinks(readme)).toEqual(['#a-b-c', '#nope', 'docs/none.md', 'docs/images/topology.svg', 'https://x.test/']);
    expect(brokenReadmeLinks(readme, {}, repoFile)).toEqual([
      'package.json "repository" (undefined) is not a GitHub repository, so npm cannot resolve relative links',
      '#nope: no heading "nope" in README.md',
      'docs/none.md: docs/none.md is not in the repository',
    ]);
    expect(headingAnchor('The catalogue as a Crossplane `Configuration` package')).toBe('the-catalogue-as-a-crossplane-configuration-package');
    expect(anchorsOf('```\n# not\n```\n# Yes\n').has('not')).toBe(false);
  });
});
