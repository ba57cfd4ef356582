#!/usr/bin/env node
// The `klutch-kit` command (loader: ./_run.js, sources through tsx in a clone, else lib/).
import { loadCli } from './_run.js';

const { main } = await loadCli('runtime/cli/main.ts', 'lib/runtime/cli/main.js', 'klutch-kit');
await main(process.argv);
