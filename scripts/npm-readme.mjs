// The README npm shows is the tarball's README.md, and npm always packs the root one: `prepack` swaps
// docs/npm-readme.md (for users of the package) in, `postpack` restores the repository's README.md
// (for contributors). `node scripts/npm-readme.mjs swap|restore`. The repository's README waits in
// .README.repo.md while the tarball is packed; a `swap` that finds it there (a pack that died before
// `postpack`) restores it first, and `npm run test:package` restores it whatever happens.
import { copyFileSync, existsSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const README = join(ROOT, 'README.md');
const SAVED = join(ROOT, '.README.repo.md');
const NPM = join(ROOT, 'docs', 'npm-readme.md');

const restore = () => {
  if (existsSync(SAVED)) renameSync(SAVED, README);
};
const cmd = process.argv[2];
if (cmd === 'swap') {
  restore();
  copyFileSync(README, SAVED);
  copyFileSync(NPM, README);
} else if (cmd === 'restore') {
  restore();
} else {
  console.error(`npm-readme: expected "swap" or "restore", got ${JSON.stringify(cmd)}`);
  process.exit(2);
}
