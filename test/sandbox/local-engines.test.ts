/**
 * What the a9s broker stand-in's RabbitMQ and Prometheus engines write and check before a server runs
 * (sandbox/local-rabbitmq.ts, sandbox/local-prometheus.ts, sandbox/_loopback-server.ts): names checked against a strict
 * pattern, configs that keep everything on loopback, the web config's bcrypt users, the program lookup's error. The
 * servers themselves are tested in test/integration/a9s/broker-standin.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import bcrypt from 'bcryptjs';
import { spawn } from 'node:child_process';
import { parse } from 'yaml';
import { findProgram, liveMembers } from '../../sandbox/_loopback-server.js';
import { prometheusUserName, webConfigText } from '../../sandbox/local-prometheus.js';
import { rabbitmqConfText, rabbitmqUserName } from '../../sandbox/local-rabbitmq.js';

describe('local-rabbitmq', () => {
  it('takes user names of a strict pattern and names field and value otherwise', () => {
    expect(rabbitmqUserName('a9s0123456789ab')).toBe('a9s0123456789ab');
    expect(rabbitmqUserName(`u${'x'.repeat(63)}`)).toHaveLength(64);
    for (const bad of ['', '9abc', 'a b', 'a/b', '../x', `u${'x'.repeat(64)}`]) {
      expect(() => rabbitmqUserName(bad)).toThrow(`RabbitMQ username: ${JSON.stringify(bad)} is not a user name here`);
    }
  });

  it('rabbitmq.conf: AMQP and management on the given address only, no TLS listener, no guest, the administrator with every permission', () => {
    const text = rabbitmqConfText('127.0.0.1', { amqp: 5001, management: 5002, distribution: 5003, epmd: 5004 }, { username: 'adm', password: 'pw' });
    const conf = Object.fromEntries(
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split(' = ') as [string, string]),
    );
    expect(conf).toEqual({
      'listeners.tcp.1': '127.0.0.1:5001',
      'listeners.ssl': 'none',
      'management.tcp.ip': '127.0.0.1',
      'management.tcp.port': '5002',
      default_user: 'adm',
      default_pass: 'pw',
      'default_user_tags.administrator': 'true',
      'default_permissions.configure': '.*',
      'default_permissions.read': '.*',
      'default_permissions.write': '.*',
      'disk_free_limit.absolute': '50MB',
      'log.console': 'false',
      'log.file.level': 'warning',
    });
  });
});

describe('local-prometheus', () => {
  it('takes user names of a strict pattern, not the stand-in’s own', () => {
    expect(prometheusUserName('a9s0123456789ab')).toBe('a9s0123456789ab');
    for (const bad of ['', 'admin', 'a:b', 'a b', '"x"', `u${'x'.repeat(64)}`]) {
      expect(() => prometheusUserName(bad)).toThrow(`Prometheus username: ${JSON.stringify(bad)} is not a user name here`);
    }
  });

  it('the web config lists each user with its bcrypt hash, as YAML that reads back to the same map', () => {
    const hash = bcrypt.hashSync('secret', 4);
    const text = webConfigText(
      new Map([
        ['admin', hash],
        ['a9sabc', '$2b$04$x'],
      ]),
    );
    expect(parse(text)).toEqual({ basic_auth_users: { admin: hash, a9sabc: '$2b$04$x' } });
    expect(bcrypt.compareSync('secret', parse(text).basic_auth_users.admin)).toBe(true);
    expect(parse(webConfigText(new Map()))).toEqual({ basic_auth_users: null });
  });
});

describe('_loopback-server', () => {
  it('findProgram: the first name found; otherwise an error naming the programs, where it looked and what to install', () => {
    expect(findProgram(['no-such-program-x', 'sh'], 'x', ['/nonexistent'])).toMatch(/\/sh$/);
    expect(() => findProgram(['no-such-program-x'], 'the Debian package x', ['/opt/x/bin'])).toThrow(
      'no-such-program-x: not found in /opt/x/bin, PATH, /usr/sbin, /usr/bin; install the Debian package x (listed in .ci/apt-packages.txt)',
    );
  });

  it('liveMembers counts the live processes of a process group', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & sleep 30 & wait'], { detached: true, stdio: 'ignore' });
    const pgid = child.pid!;
    try {
      for (let i = 0; i < 100 && liveMembers(pgid) < 3; i++) await new Promise((r) => setTimeout(r, 20));
      expect(liveMembers(pgid)).toBe(3);
    } finally {
      process.kill(-pgid, 'SIGKILL');
    }
    for (let i = 0; i < 100 && liveMembers(pgid) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(liveMembers(pgid)).toBe(0);
  });
});
