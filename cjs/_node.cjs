'use strict';
// Minimum Node.js of klutch-kit, checked before anything else loads. CommonJS projects (cdk8s init
// typescript-app, Pulumi's TypeScript template, ts-node) load klutch-kit's ES modules through
// require(), which Node.js runs without a flag from 20.19 (20.x line) and 22.12 (22.x line).
const MINIMUM = '^20.19.0 || >=22.12.0';

/** Whether a Node.js version (e.g. "20.19.0") can run klutch-kit. */
function supportsNode(version) {
  const [major, minor] = String(version).replace(/^v/, '').split('.').map(Number);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  return major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
}

/** Throws a one-line error naming the running and the required versions when Node.js is too old. */
function checkNode(version = process.versions.node) {
  if (supportsNode(version)) return;
  const e = new Error(
    `klutch-kit needs Node.js ${MINIMUM} (it is an ES module package that CommonJS code loads with require()); ` +
      `this is Node.js ${version}. Install a newer Node.js (e.g. \`nvm install 22\`).`,
  );
  e.code = 'KLUTCH_KIT_NODE_VERSION';
  throw e;
}

module.exports = { MINIMUM, supportsNode, checkNode };
