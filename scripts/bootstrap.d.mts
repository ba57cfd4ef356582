// Types of scripts/bootstrap.mjs (plain JavaScript: it runs before `npm ci`), for its unit test.
export declare const SANDBOX_PACKAGES: string[];
export declare function parsePackageList(text: string): string[];
export declare function nodeModulesState(lock: string, installed: string | undefined): { fresh: boolean; reason: string };
export declare function nodeVersionOk(version: string): boolean;
export type DebianPlan =
  { action: 'none'; missing: string[] } | { action: 'install'; sudo: boolean; missing: string[] } | { action: 'tell'; missing: string[]; lines: string[] };
export declare function debianPlan(wanted: readonly string[], isInstalled: (p: string) => boolean, uid: number, sudoWorks: boolean): DebianPlan;
