/**
 * Node.js flags of each runtime component, given to `node` before its program: in the image's entrypoint
 * (runtime/image/build.ts), by the sandbox to its local processes and by `npm run bench:konnector` to the konnector it
 * measures, so that each runs the way the pods do. The one place they are set.
 *
 * konnector, `--single-threaded-gc`: V8 collects garbage on the main thread instead of helper threads. A konnector
 * syncing objects allocates briskly on a small heap, and helper threads cost more CPU than they save: in one
 * `npm run bench:konnector -- --sizes 1000` it used 0.99 and 0.87 ms of CPU per synced object against 1.08 and 1.04
 * without the flag (its GC helpers' share 0.32 and 0.27 s against 0.40 and 0.39 s), and 110–122 MB RSS against
 * 117–124 (docs/konnector.md has the comparison in one run). Its pauses stay short on a heap that size. The flag has
 * to be on the command line: Node.js refuses it in NODE_OPTIONS, and V8 aborts when it is set at run time
 * (`v8.setFlagsFromString`).
 *
 * backend: none.
 */
export const RUNTIME_NODE_FLAGS: Readonly<Record<'backend' | 'konnector', readonly string[]>> = {
  backend: [],
  konnector: ['--single-threaded-gc'],
};
