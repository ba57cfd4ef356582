// jest loads globalSetup with Node's own ESM loader (no ts-jest, no .js→.ts mapping), so this plain-JS
// shim loads the TypeScript implementation through tsx.
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { globalSetup: run } = await tsImport('./setup.ts', import.meta.url);
  await run();
}
