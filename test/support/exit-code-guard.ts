/**
 * jest `setupFilesAfterEnv` of both projects. Code under test may set `process.exitCode` (the CLIs do).
 * Jest's own process exits with a leftover non-zero exitCode even when every test passed, which fails CI
 * with no test named. So each test file must reset it; one that does not fails here, by name, and the code
 * is reset for the next file.
 */
import { afterAll } from '@jest/globals';

afterAll(() => {
  const code = process.exitCode;
  if (code === undefined || code === 0) return;
  process.exitCode = undefined;
  throw new Error(
    `this test file left process.exitCode = ${String(code)}: reset it after running a command in-process, e.g. afterEach(() => { process.exitCode = undefined; })`,
  );
});
