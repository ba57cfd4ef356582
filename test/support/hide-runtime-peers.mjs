// `node --import ./test/support/hide-runtime-peers.mjs …`: the five optional runtime peers of
// klutch-kit cannot be resolved, as in a project that installed klutch-kit without them (a resolve
// hook fails them the way Node does when a package is not installed).
import { register } from 'node:module';

const hook = `
const PEERS = new Set(['@kubernetes/client-node', 'openid-client', 'jose', 'pino', 'prom-client']);
export async function resolve(specifier, context, next) {
  const pkg = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  if (PEERS.has(pkg)) {
    const e = new Error("Cannot find package '" + pkg + "' imported from " + context.parentURL);
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}
`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
