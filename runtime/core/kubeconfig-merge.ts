/**
 * `$KUBECONFIG` with several files, merged as kubectl merges them (client-go's loading rules): the
 * files are read in order, a missing one is skipped, the first file that defines a cluster, user or
 * context of a name wins (later definitions of that name are ignored, never merged field by field),
 * and `current-context` comes from the first file that sets it. Relative paths (certificate files,
 * `tokenFile`, an exec plugin's command with a path) stay relative to the file that holds them.
 */
import { readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { KubeconfigLoadError, loadKubeconfigFile, parseKubeconfig, type ClusterAccess } from './kubeconfig.js';

type Named<K extends string> = { name?: unknown } & { [k in K]?: Record<string, unknown> };

/** The parts of a kubeconfig the merge keeps. */
export interface MergedKubeconfig {
  'current-context'?: string;
  clusters: Array<Named<'cluster'>>;
  users: Array<Named<'user'>>;
  contexts: Array<Named<'context'>>;
}

/** The files of a `$KUBECONFIG` value (`:`-separated, `;` on Windows), empty entries and repeats dropped. */
export function kubeconfigPaths(value: string | undefined, sep = delimiter): string[] {
  const out: string[] = [];
  for (const p of (value ?? '').split(sep)) if (p && !out.includes(p)) out.push(p);
  return out;
}

const CLUSTER_FILES = ['certificate-authority'] as const;
const USER_FILES = ['client-certificate', 'client-key', 'tokenFile'] as const;

/** A copy of `entry[key]` whose file references are absolute (resolved against `dir`). */
function absolute(entry: Record<string, unknown> | undefined, fields: readonly string[], dir: string, exec = false): Record<string, unknown> | undefined {
  if (!entry || typeof entry !== 'object') return entry;
  const out: Record<string, unknown> = { ...entry };
  for (const f of fields) if (typeof out[f] === 'string' && out[f] && !isAbsolute(out[f] as string)) out[f] = resolve(dir, out[f] as string);
  const e = out.exec as { command?: unknown } | undefined;
  // kubectl resolves an exec command with a path in it against the kubeconfig's folder; a bare name is looked up on PATH
  if (exec && e && typeof e.command === 'string' && /[\\/]/.test(e.command) && !isAbsolute(e.command)) out.exec = { ...e, command: resolve(dir, e.command) };
  return out;
}

/**
 * Merges parsed kubeconfigs, first file first. Each source's `dir` resolves its relative paths.
 */
export function mergeKubeconfigs(sources: ReadonlyArray<{ readonly dir: string; readonly config: unknown }>): MergedKubeconfig {
  const merged: MergedKubeconfig = { clusters: [], users: [], contexts: [] };
  const seen = { clusters: new Set<unknown>(), users: new Set<unknown>(), contexts: new Set<unknown>() };
  for (const { dir, config } of sources) {
    if (!config || typeof config !== 'object') continue;
    const c = config as Record<string, unknown>;
    if (merged['current-context'] === undefined && typeof c['current-context'] === 'string' && c['current-context'])
      merged['current-context'] = c['current-context'];
    const add = <K extends 'clusters' | 'users' | 'contexts'>(
      list: K,
      key: 'cluster' | 'user' | 'context',
      fix: (v: Record<string, unknown> | undefined) => unknown,
    ) => {
      const entries = Array.isArray(c[list]) ? (c[list] as Array<Record<string, unknown>>) : [];
      for (const e of entries) {
        if (!e || typeof e !== 'object' || seen[list].has(e.name)) continue;
        seen[list].add(e.name);
        (merged[list] as unknown[]).push({ ...e, [key]: fix(e[key] as Record<string, unknown> | undefined) });
      }
    };
    add('clusters', 'cluster', (v) => absolute(v, CLUSTER_FILES, dir));
    add('users', 'user', (v) => absolute(v, USER_FILES, dir, true));
    add('contexts', 'context', (v) => v);
  }
  return merged;
}

/** Reads the files that exist (in order); a file that cannot be read or parsed is an error naming it. */
function readAll(paths: readonly string[]): Array<{ path: string; dir: string; config: unknown }> {
  const out: Array<{ path: string; dir: string; config: unknown }> = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // as kubectl: a missing file in the list is skipped
      throw new KubeconfigLoadError(`kubeconfig ${path} (from $KUBECONFIG): cannot read it (${(e as Error).message})`);
    }
    let config: unknown;
    try {
      config = parse(text);
    } catch (e) {
      throw new KubeconfigLoadError(`kubeconfig ${path} (from $KUBECONFIG): not valid YAML (${(e as Error).message})`);
    }
    out.push({ path, dir: dirname(resolve(path)), config });
  }
  return out;
}

/**
 * Loads the kubeconfig `$KUBECONFIG` names: one file as {@link loadKubeconfigFile}, several merged
 * as kubectl merges them. Missing files are skipped; none existing is an error listing them.
 */
export function loadKubeconfigFiles(paths: readonly string[], context?: string, opts: { execTimeoutMs?: number } = {}): ClusterAccess {
  const found = readAll(paths);
  if (found.length === 0) throw new KubeconfigLoadError(`$KUBECONFIG: none of its files exists (${paths.join(', ') || 'empty'})`);
  if (found.length === 1) return loadKubeconfigFile(found[0].path, context, opts);
  const merged = mergeKubeconfigs(found);
  // file references are absolute now; files and exec plugins are allowed as for any file the user gave
  const parseOpts = {
    context,
    source: `kubeconfig ${found.map((f) => f.path).join(delimiter)} (merged)`,
    execTimeoutMs: opts.execTimeoutMs,
    allowExec: true,
    allowFiles: true,
  };
  return parseKubeconfig(JSON.stringify(merged), parseOpts);
}

/** The context names of the merged files (for messages); undefined when one cannot be read. */
export function kubeconfigContextNames(paths: readonly string[]): string[] | undefined {
  try {
    return mergeKubeconfigs(readAll(paths)).contexts.map((c) => String(c.name));
  } catch {
    return undefined;
  }
}
