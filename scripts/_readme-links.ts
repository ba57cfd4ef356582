/**
 * Whether the links of the package's README.md resolve where users read it, on npmjs.com: npm shows the
 * README of the tarball and resolves its relative links against `repository` (a GitHub URL), so each
 * relative link must name a file of the repository, and each `#anchor` a heading of the page it points
 * to. Used by scripts/test-package.ts (on the packed README) and test/package/readme-links.test.ts.
 */

/** A link target of a Markdown text: `[text](target)` and `![alt](target)`, outside code. */
export function markdownLinks(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push(m[1]!);
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown page's headings. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (m) anchors.add(headingAnchor(m[1]!));
  }
  return anchors;
}

/**
 * The README's links that would not resolve on npm, each with the reason: `repository` is not a GitHub URL,
 * a relative link names no file of the repository, or an anchor names no heading. Absolute links into the
 * repository itself (`https://github.com/<owner>/<repo>/blob/main/<file>#anchor`, `…/<repo>#anchor` for its
 * README) are checked the same way: the npm README (docs/npm-readme.md) links to docs/ with them.
 */
export function brokenReadmeLinks(readme: string, pkg: { repository?: string | { url?: string } }, repoFile: (path: string) => string | undefined): string[] {
  const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const broken: string[] = [];
  const relative = markdownLinks(readme).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));
  if (relative.some((l) => !l.startsWith('#')) && !/github\.com[/:][\w.-]+\/[\w.-]+/.test(repo ?? ''))
    broken.push(`package.json "repository" (${JSON.stringify(repo)}) is not a GitHub repository, so npm cannot resolve relative links`);
  const self = anchorsOf(readme);
  const slug = /github\.com[/:]([\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(repo ?? '')?.[1];
  if (slug) {
    const own = new RegExp(`^https://github\\.com/${slug.replace(/[.]/g, '\\.')}(?:/(?:blob|tree)/main/([^#]*))?(?:#(.*))?$`, 'i');
    for (const link of markdownLinks(readme)) {
      const m = own.exec(link);
      if (!m) continue;
      const [, file, anchor] = m;
      if (file) relative.push(`${file}${anchor !== undefined ? `#${anchor}` : ''}`);
      else if (anchor !== undefined && anchor !== 'readme') relative.push(`README.md#${anchor}`);
    }
  }
  for (const link of relative) {
    const [file, anchor] = link.split('#', 2) as [string, string | undefined];
    if (file === '') {
      if (!self.has(anchor!)) broken.push(`${link}: no heading "${anchor}" in README.md`);
      continue;
    }
    const text = repoFile(file.replace(/^\.\//, '').replace(/\/$/, ''));
    if (text === undefined) broken.push(`${link}: ${file} is not in the repository`);
    else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(text).has(anchor)) broken.push(`${link}: no heading "${anchor}" in ${file}`);
  }
  return broken;
}
