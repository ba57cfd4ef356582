// kubectl-bind retries the 403 a fresh provider kubeconfig can get while a backend still grants access
// (Klutch's example-backend creates the RoleBinding ≈ 2 s after /bind), with bounded backoff.
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../../runtime/core/client.js';
import { whileForbidden } from '../../../runtime/kubectl-bind/apiservice.js';

const forbidden = () => new ApiError(403, 'Forbidden', 'apiserviceexportrequests is forbidden', 'POST', '/apis/x');

function clock() {
  let t = 0;
  const slept: number[] = [];
  return { now: () => t, sleep: async (ms: number) => void (slept.push(ms), (t += ms)), slept };
}

describe('whileForbidden', () => {
  it('retries 403s with doubling backoff until the call succeeds', async () => {
    const c = clock();
    let calls = 0;
    const retried: string[] = [];
    const v = await whileForbidden(
      async () => {
        if (++calls < 4) throw forbidden();
        return 'created';
      },
      { what: 'x', deadline: 30_000, now: c.now, sleep: c.sleep, onRetry: (e) => retried.push(e.reason) },
    );
    expect(v).toBe('created');
    expect(c.slept).toEqual([250, 500, 1000]);
    expect(retried).toEqual(['Forbidden', 'Forbidden', 'Forbidden']);
  });

  it('gives up with the 403 at the deadline, the backoff capped at 4 s', async () => {
    const c = clock();
    const err = await whileForbidden(
      async () => {
        throw forbidden();
      },
      { what: 'x', deadline: 20_000, now: c.now, sleep: c.sleep },
    ).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe(403);
    expect(c.slept).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000, 4000]); // 19.75 s; one more would pass the deadline
    expect(c.now()).toBeLessThanOrEqual(20_000);
  });

  it('does not retry other errors', async () => {
    const c = clock();
    let calls = 0;
    const err = await whileForbidden(
      async () => {
        calls++;
        throw new ApiError(409, 'AlreadyExists', 'exists', 'POST', '/x');
      },
      { what: 'x', deadline: 30_000, now: c.now, sleep: c.sleep },
    ).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe(409);
    expect(calls).toBe(1);
  });
});
