// Package trees in temporary folders, shared by the image build tests (pack-cache, build-cache).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Writes `text` to `rel` under `root`, making the folders on the way. */
export function writeUnder(root: string, rel: string, text: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}
