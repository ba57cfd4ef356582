// Shared loader of the bin/ shims. In a clone (TypeScript sources present and tsx installed) it
// runs the sources through tsx, so no build step is needed; otherwise it runs the compiled lib/.
// KLUTCH_KIT_CLI_COMPILED=1 forces lib/.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Optional peer dependencies the runtime (kubectl-bind, backend, konnector, cluster) loads. */
const RUNTIME_PEERS = ['@kubernetes/client-node', 'openid-client', 'jose', 'pino', 'prom-client'];

/** One line instead of Node's stack trace when an optional runtime peer is not installed. */
function missingPeer(e, name) {
  if (e?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  const pkg = RUNTIME_PEERS.find((p) => String(e.message).includes(`'${p}'`));
  if (!pkg) return false;
  process.stderr.write(
    `${name}: the package ${pkg} is not installed; the klutch-kit commands need the runtime peers: npm install ${RUNTIME_PEERS.join(' ')}\n`,
  );
  process.exit(1);
}

/**
 * Loads a CLI entry module. `sourceRel` and `compiledRel` are relative to the package root
 * (e.g. `runtime/cli/main.ts` and `lib/runtime/cli/main.js`); `name` prefixes the error message.
 */
export async function loadCli(sourceRel, compiledRel, name) {
  try {
    createRequire(import.meta.url)('../cjs/_node.cjs').checkNode();
  } catch (e) {
    process.stderr.write(`${name}: ${e.message}\n`);
    process.exit(1);
  }
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
  try {
    return await import(compiled.href);
  } catch (e) {
    missingPeer(e, name);
    throw e;
  }
}
