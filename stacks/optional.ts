/** Loads an optional npm package (not a dependency of klutch-kit) with a dynamic `import()`. */
import { StackConfigError } from './config.js';

/** Imports a module by name; injectable for tests. */
export type Importer = (specifier: string) => Promise<unknown>;

const defaultImporter: Importer = (specifier) => import(specifier);

function notInstalled(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  const msg = e instanceof Error ? e.message : String(e);
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (module|package)/.test(msg);
}

/**
 * Imports `pkg`, or throws a {@link StackConfigError} with `missing` (which names the config key and what to install)
 * when the package is not installed. Other load errors propagate unchanged.
 */
export async function loadOptional<T>(pkg: string, missing: string, importer: Importer = defaultImporter): Promise<T> {
  try {
    return (await importer(pkg)) as T;
  } catch (e) {
    if (notInstalled(e)) throw new StackConfigError(missing);
    throw e;
  }
}
