// Shared loader of the bin/ shims. In a clone (TypeScript sources present and tsx installed) it
// runs the sources through tsx, so no build step is needed; otherwise it runs the compiled lib/.
// KLUTCH_KIT_CLI_COMPILED=1 forces lib/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Loads a CLI entry module. `sourceRel` and `compiledRel` are relative to the package root
 * (e.g. `runtime/cli/main.ts` and `lib/runtime/cli/main.js`); `name` prefixes the error message.
 */
export async function loadCli(sourceRel, compiledRel, name) {
  const source = new URL(`../${sourceRel}`, import.meta.url);
  const compiled = new URL(`../${compiledRel}`, import.meta.url);
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
    process.stderr.write(`${name}: neither tsx (for the TypeScript sources) nor the compiled lib/ is available; run \`npm ci\` or \`npm run build\`\n`);
    process.exit(1);
  }
  return import(compiled.href);
}
