/**
 * The CPU figure of a Go build (runtime/realinfra/build.ts goWithCpuTimes, cpuSecondsOf): go runs under sh, whose
 * `times` adds the children's CPU time to the output. Run here with a stand-in "go" script that burns CPU, so the
 * figure is real, and with a command that does not exist (exit 127, no output).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { GO_BUILD_FLAGS, cpuSecondsOf, goBuildGcEnv, goWithCpuTimes, planComponent } from '../../runtime/realinfra/build.js';

describe('Go build CPU figure', () => {
  it('reads the children line of `times`', () => {
    expect(cpuSecondsOf('ok\n0m0.001s 0m0.002s\n1m2.500s 0m3.250s\n')).toBeCloseTo(65.75, 5);
    expect(cpuSecondsOf('no times here')).toBeUndefined();
  });

  it('measures the CPU time of the command and keeps its arguments and exit code', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-go-cpu-'));
    try {
      const fakeGo = path.join(dir, 'go');
      // burns ~0.3 s of CPU in a child process, prints its arguments, exits 3
      fs.writeFileSync(fakeGo, '#!/bin/sh\necho "args: $*"\nawk \'BEGIN{for(i=0;i<3000000;i++)s+=i}\'\nexit 3\n', { mode: 0o755 });
      const r = spawnSync('sh', goWithCpuTimes(fakeGo, ['build', '-o', 'x y']), { encoding: 'utf8' });
      expect(r.status).toBe(3);
      expect(r.stdout).toContain('args: build -o x y');
      const cpu = cpuSecondsOf(r.stdout);
      expect(cpu).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 127 with no output when the go command does not exist', () => {
    const r = spawnSync('sh', goWithCpuTimes('/nonexistent/go', ['build']), { encoding: 'utf8' });
    expect(r.status).toBe(127);
    expect(r.stdout + r.stderr).toBe('');
  });

  it('every build compiles without DWARF, which -s -w would drop at link time anyway', () => {
    expect(GO_BUILD_FLAGS).toContain('-gcflags=all=-dwarf=false');
    expect(GO_BUILD_FLAGS).toContain('-trimpath');
  });
});

describe('the compilers garbage collector during a build (goBuildGcEnv)', () => {
  const GiB = 1024 ** 3;
  it('turns GC off up to a memory limit of an eighth of the machine, between 512 MiB and 3 GiB', () => {
    expect(goBuildGcEnv({}, 24 * GiB)).toEqual({ GOGC: 'off', GOMEMLIMIT: '3072MiB' });
    expect(goBuildGcEnv({}, 8 * GiB)).toEqual({ GOGC: 'off', GOMEMLIMIT: '1024MiB' });
    expect(goBuildGcEnv({}, 2 * GiB)).toEqual({ GOGC: 'off', GOMEMLIMIT: '512MiB' });
  });

  it("leaves the user's own GOGC or GOMEMLIMIT alone", () => {
    expect(goBuildGcEnv({ GOGC: '100' }, 24 * GiB)).toEqual({});
    expect(goBuildGcEnv({ GOMEMLIMIT: '6GiB' }, 24 * GiB)).toEqual({});
  });

  it('is not part of a cache key: the same binary is found whatever the GC settings', () => {
    const before = planComponent('etcd', { cacheRoot: '/nonexistent' }).key;
    const saved = process.env['GOGC'];
    process.env['GOGC'] = '50';
    try {
      expect(planComponent('etcd', { cacheRoot: '/nonexistent' }).key).toBe(before);
    } finally {
      if (saved === undefined) delete process.env['GOGC'];
      else process.env['GOGC'] = saved;
    }
  });
});
