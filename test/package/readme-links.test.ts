/**
 * The links of README.md resolve on npmjs.com (scripts/_readme-links.ts): `repository` is the GitHub
 * repository relative links resolve against, every linked file is in the repository and every anchor
 * names a heading. `npm run test:package` runs the same check on the README inside the tarball, which is
 * docs/npm-readme.md (swapped in by scripts/npm-readme.mjs at `prepack`): its links are absolute GitHub
 * URLs into the repository, checked the same way.
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

  it('of docs/npm-readme.md (the README npm shows) resolve: absolute GitHub URLs into the repository', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository?: { url?: string } };
    const npmReadme = readFileSync(join(ROOT, 'docs', 'npm-readme.md'), 'utf8');
    expect(markdownLinks(npmReadme).filter((l) => !/^https:\/\//.test(l))).toEqual([]);
    expect(markdownLinks(npmReadme).filter((l) => l.startsWith('https://github.com/anynines/klutch-kit/')).length).toBeGreaterThan(3);
    expect(brokenReadmeLinks(npmReadme, pkg, repoFile)).toEqual([]);
  });

  it('reports an absolute link into the repository that names no file or no heading (the check can fail)', () => {
    const pkg = { repository: { url: 'git+https://github.com/anynines/klutch-kit.git' } };
    const readme =
      '[a](https://github.com/anynines/klutch-kit/blob/main/docs/none.md) [b](https://github.com/anynines/klutch-kit#no-such-heading) ' +
      '[c](https://github.com/anynines/klutch-kit/blob/main/docs/pulumi.md#nope) [d](https://github.com/anynines/klutch-kit#readme) ' +
      '[e](https://github.com/anynines/klutch-kit/blob/main/docs/pulumi.md#runtime-images) [f](https://github.com/other/repo/blob/main/x.md)\n';
    expect(brokenReadmeLinks(readme, pkg, repoFile)).toEqual([
      'docs/none.md: docs/none.md is not in the repository',
      'README.md#no-such-heading: no heading "no-such-heading" in README.md',
      'docs/pulumi.md#nope: no heading "nope" in docs/pulumi.md',
    ]);
  });
});
