#!/usr/bin/env node
// The `klutch-kit` command. In a clone (TypeScript sources present and tsx installed) it runs the
// sources through tsx, so no build step is needed; otherwise it runs the compiled lib/.
// KLUTCH_KIT_CLI_COMPILED=1 forces lib/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../runtime/cli/main.ts', import.meta.url);
const compiled = new URL('../lib/runtime/cli/main.js', import.meta.url);

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
    process.stderr.write('klutch-kit: neither tsx (for the TypeScript sources) nor the compiled lib/ is available; run `npm ci` or `npm run build`\n');
    process.exit(1);
  }
  return import(compiled.href);
}

const { main } = await load();
await main(process.argv);
