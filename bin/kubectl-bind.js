#!/usr/bin/env node
// `kubectl-bind` (the kubectl plugin `kubectl bind`; loader: ./_run.js, sources through tsx in a
// clone, else lib/).
import { loadCli } from './_run.js';

const { run } = await loadCli('runtime/kubectl-bind/main.ts', 'lib/runtime/kubectl-bind/main.js', 'kubectl-bind');
process.exitCode = await run(process.argv.slice(2), { out: process.stdout, err: process.stderr, in: process.stdin });
