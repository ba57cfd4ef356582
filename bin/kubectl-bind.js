#!/usr/bin/env node
// `kubectl-bind` (the kubectl plugin `kubectl bind`). In a clone (TypeScript sources present and tsx
// installed) it runs the sources through tsx; otherwise the compiled lib/.
// KLUTCH_KIT_CLI_COMPILED=1 forces lib/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../runtime/kubectl-bind/main.ts', import.meta.url);
const compiled = new URL('../lib/runtime/kubectl-bind/main.js', import.meta.url);

async function load() {
  if (process.env.KLUTCH_KIT_CLI_COMPILED !== '1' && existsSync(fileURLToPath(source))) {
    try {
      const { register } = await import('tsx/esm/api');
      register();
      return await import(source.href);
    } catch (e) {
      if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes('tsx')) throw e;
    }
  }
  if (!existsSync(fileURLToPath(compiled))) {
    process.stderr.write('kubectl-bind: neither tsx (for the TypeScript sources) nor the compiled lib/ is available; run `npm ci` or `npm run build`\n');
    process.exit(1);
  }
  return import(compiled.href);
}

const { run } = await load();
process.exitCode = await run(process.argv.slice(2), { out: process.stdout, err: process.stderr, in: process.stdin });
