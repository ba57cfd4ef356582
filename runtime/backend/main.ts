#!/usr/bin/env node
/** `klutch-backend`: the bind backend binary. See `klutch-backend --help` and docs/bind.md. */
import { CommanderError } from 'commander';
import { startBackend } from './app.js';
import { backendCommand, parseBackendOptions } from './options.js';

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(backendCommand().helpInformation());
    return 0;
  }
  let opts;
  try {
    opts = parseBackendOptions(argv);
  } catch (e) {
    const msg = e instanceof CommanderError ? e.message.replace(/^error: /, '') : (e as Error).message;
    process.stderr.write(`klutch-backend: ${msg}\nRun "klutch-backend --help" for the flags.\n`);
    return 2;
  }
  let backend: Awaited<ReturnType<typeof startBackend>>;
  try {
    backend = await startBackend(opts, { defaultMetrics: true, onLostLeadership: () => process.exit(1) });
  } catch (e) {
    process.stderr.write(`klutch-backend: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  // A promise rejected with nobody handling it is a bug: reported (log with context, metric, /readyz)
  // instead of ending the process. An uncaught exception leaves the process in an unknown state: it
  // is logged and the process exits 1, so the kubelet restarts it; never a silent exit.
  process.on('unhandledRejection', (e) => backend.unexpected.record('process', e, { kind: 'unhandledRejection' }));
  process.on('uncaughtException', (e) => {
    backend.unexpected.record('process', e, { kind: 'uncaughtException', exiting: true });
    process.exit(1);
  });
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  // readiness off, drain the requests in flight (a bind completes), then close (--shutdown-delay, --shutdown-grace)
  await backend.stop({ drain: true });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`klutch-backend: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
