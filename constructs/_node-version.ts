/**
 * The Node.js versions klutch-kit runs on, checked when the package root is imported (ES module
 * projects; CommonJS projects get the same check from cjs/_node.cjs before anything loads).
 * `^20.19.0 || >=22.12.0`: from these, Node.js loads ES modules through `require()` without a flag.
 */
export const MINIMUM_NODE = '^20.19.0 || >=22.12.0';

/** Whether a Node.js version (e.g. "20.19.0" or "v22.12.0") can run klutch-kit. */
export function supportsNode(version: string): boolean {
  const [major, minor] = String(version).replace(/^v/, '').split('.').map(Number);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  return major! >= 23 || (major === 22 && minor! >= 12) || (major === 20 && minor! >= 19);
}

if (!supportsNode(process.versions.node)) {
  throw new Error(`klutch-kit needs Node.js ${MINIMUM_NODE}; this is Node.js ${process.versions.node}. Install a newer Node.js (e.g. \`nvm install 22\`).`);
}
