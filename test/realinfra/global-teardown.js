// See global-setup.js: plain-JS shim that loads the TypeScript teardown through tsx.
import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown() {
  const { globalTeardown: run } = await tsImport('./teardown.ts', import.meta.url);
  await run();
}
