import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { planServer, renderSettings, settingsChange } from '../../sandbox/a8s-operator/server-settings.js';
import { instanceKeyOf } from '../../sandbox/a8s-operator/servicebinding-reconciler.js';
import { freeLoopbackAddress, loopbackAddresses, releaseLoopbackAddress } from '../../sandbox/a8s-operator/loopback.js';

describe('planServer (sandbox a8s operator)', () => {
  it('listens on the given loopback address only, without a Unix socket', () => {
    const p = planServer({}, '127.0.0.7', 5432, 15);
    expect(p.settings['listen_addresses']).toBe("'127.0.0.7'");
    expect(p.settings['port']).toBe('5432');
    expect(p.settings['unix_socket_directories']).toBe("''");
    expect(p.run).toBe(true);
    expect(p.blocking).toEqual([]);
    expect(p.notApplied).toEqual([]);
  });

  it('maps a8s parameters to PostgreSQL settings with their units; restart-only ones are marked', () => {
    const p = planServer(
      { parameters: { maxConnections: 42, statementTimeoutMillis: 1500, tempFileLimitKiloBytes: -1, archiveTimeoutSeconds: 0, logErrorVerbosity: 'VERBOSE' } },
      '127.0.0.2',
      5432,
      15,
    );
    expect(p.settings).toMatchObject({
      max_connections: '42',
      statement_timeout: '1500ms',
      temp_file_limit: '-1kB',
      archive_timeout: '0s',
      log_error_verbosity: "'VERBOSE'",
      superuser_reserved_connections: '3',
    });
    expect(p.restartSettings.has('max_connections')).toBe(true);
    expect(p.restartSettings.has('statement_timeout')).toBe(false);
  });

  it('keeps superuser_reserved_connections below a tiny max_connections (else PostgreSQL does not start)', () => {
    expect(planServer({ parameters: { maxConnections: 1 } }, '127.0.0.2', 5432, 15).settings['superuser_reserved_connections']).toBe('0');
    expect(planServer({ parameters: { maxConnections: 3 } }, '127.0.0.2', 5432, 15).settings['superuser_reserved_connections']).toBe('2');
  });

  it('blocks on replicas > 1 and names it; replicas 0 means no server', () => {
    const p = planServer({ replicas: 3 }, '127.0.0.2', 5432, 15);
    expect(p.blocking).toEqual([expect.stringMatching(/^spec\.replicas 3 cannot be honoured/)]);
    expect(planServer({ replicas: 0 }, '127.0.0.2', 5432, 15).run).toBe(false);
  });

  it('names what a local server runs without: version, volume, resources, TLS, postgis', () => {
    const p = planServer(
      {
        version: 14,
        volumeSize: '1Gi',
        resources: { limits: { cpu: '1' } },
        expose: 'LoadBalancer',
        extensions: ['hstore', 'postgis'],
        parameters: { sslMinProtocolVersion: 'TLSv1.2' },
      },
      '127.0.0.2',
      5432,
      15,
    );
    expect(p.extensions).toEqual(['hstore']);
    expect(p.notApplied).toEqual([
      'spec.parameters sslMinProtocolVersion "TLSv1.2" (the local server accepts no TLS connections)',
      "spec.version 14 (the local server is PostgreSQL 15, Debian's postgresql package)",
      'spec.volumeSize "1Gi" (data lives in the sandbox\'s run folder, no volume)',
      'spec.resources limits.cpu=1 (a local process, no pod)',
      'spec.expose LoadBalancer (the server listens on a loopback address only)',
      "spec.extensions postgis (not shipped by Debian's postgresql-contrib)",
    ]);
  });

  it('rejects unknown parameters and values a setting cannot take, naming field and value', () => {
    const p = planServer({ parameters: { maxConections: 5, logStatement: "all'; drop" } }, '127.0.0.2', 5432, 15);
    expect(p.blocking).toEqual([
      'spec.parameters.maxConections 5 is not an a8s PostgreSQL parameter',
      'spec.parameters.logStatement "all\'; drop" contains characters a PostgreSQL setting cannot take',
    ]);
  });

  it('tells reload from restart changes', () => {
    const a = planServer({ parameters: { maxConnections: 10 } }, '127.0.0.2', 5432, 15);
    expect(settingsChange(a.settings, planServer({ parameters: { maxConnections: 10, statementTimeoutMillis: 5 } }, '127.0.0.2', 5432, 15))).toEqual({
      changed: ['statement_timeout'],
      restart: false,
    });
    expect(settingsChange(a.settings, planServer({ parameters: { maxConnections: 11 } }, '127.0.0.2', 5432, 15))).toEqual({
      changed: ['max_connections'],
      restart: true,
    });
    expect(renderSettings(a)).toContain("listen_addresses = '127.0.0.2'");
  });
});

describe('instanceKeyOf / loopbackAddresses', () => {
  it('resolves the bound Postgresql or names the wrong field', () => {
    const sb = (instance: Record<string, string>) => ({ metadata: { name: 'b', namespace: 'ns1' }, spec: { instance } });
    expect(instanceKeyOf(sb({ apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name: 'db' }))).toEqual({ key: 'ns1/db' });
    expect(instanceKeyOf(sb({ apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name: 'db', namespace: 'ns2' }))).toEqual({ key: 'ns2/db' });
    expect(instanceKeyOf(sb({ apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql' } as Record<string, string>))).toEqual({
      error: 'spec.instance.name is missing',
    });
  });

  it('starts at 127.0.0.2 and never yields 127.0.0.1 or network/broadcast host bytes', () => {
    const first = [...take(loopbackAddresses(), 300)];
    expect(first[0]).toBe('127.0.0.2');
    expect(first).not.toContain('127.0.0.1');
    expect(first.some((a) => /\.(0|255)$/.test(a))).toBe(false);
    expect(first[253]).toBe('127.0.1.1');
  });

  it('two servers picking an address at the same moment in one process get different ones, until one gives its address back', async () => {
    // port 0 is free on every address: only the process-wide reservation tells the two calls apart
    const [a, b] = await Promise.all([freeLoopbackAddress(0, new Set()), freeLoopbackAddress(0, new Set())]);
    expect(a).not.toBe(b);
    releaseLoopbackAddress(a, 0);
    expect(await freeLoopbackAddress(0, new Set())).toBe(a);
    releaseLoopbackAddress(a, 0);
    releaseLoopbackAddress(b, 0);
  });

  it('an address another live process reserved is skipped; one whose process is gone is taken over', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-loopback-test-'));
    const before = process.env.KLUTCH_KIT_LOOPBACK_DIR;
    process.env.KLUTCH_KIT_LOOPBACK_DIR = dir;
    const other = spawn('sleep', ['60']);
    try {
      fs.writeFileSync(path.join(dir, '127.0.0.2-0'), String(other.pid)); // a live process holds .2
      fs.writeFileSync(path.join(dir, '127.0.0.3-0'), '999999999'); // a gone process held .3
      const a = await freeLoopbackAddress(0, new Set());
      expect(a).toBe('127.0.0.3');
      expect(fs.readFileSync(path.join(dir, '127.0.0.3-0'), 'utf8')).toBe(String(process.pid));
      releaseLoopbackAddress(a, 0);
      expect(fs.existsSync(path.join(dir, '127.0.0.3-0'))).toBe(false);
      expect(fs.readFileSync(path.join(dir, '127.0.0.2-0'), 'utf8')).toBe(String(other.pid)); // not ours: left alone
    } finally {
      other.kill();
      if (before === undefined) delete process.env.KLUTCH_KIT_LOOPBACK_DIR;
      else process.env.KLUTCH_KIT_LOOPBACK_DIR = before;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the reservations folder it makes is every user’s (mode 1777, as /tmp): a root sandbox and a user’s share it', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-loopback-test-'));
    const before = process.env.KLUTCH_KIT_LOOPBACK_DIR;
    process.env.KLUTCH_KIT_LOOPBACK_DIR = path.join(parent, 'reservations');
    try {
      const a = await freeLoopbackAddress(0, new Set());
      expect(fs.statSync(process.env.KLUTCH_KIT_LOOPBACK_DIR).mode & 0o7777).toBe(0o1777);
      releaseLoopbackAddress(a, 0);
    } finally {
      if (before === undefined) delete process.env.KLUTCH_KIT_LOOPBACK_DIR;
      else process.env.KLUTCH_KIT_LOOPBACK_DIR = before;
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});

function* take<T>(g: Iterable<T>, n: number): Generator<T> {
  let i = 0;
  for (const v of g) {
    if (i++ >= n) return;
    yield v;
  }
}
