/**
 * The SQL text the a9s broker stand-in's MariaDB engine sends (sandbox/local-mariadb.ts): names checked against a
 * strict pattern, the password only as its mysql_native_password hash. The server itself is tested in
 * test/integration/a9s/broker-standin.test.ts.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalMariadbServer, createUserSql, dropUserSql, mariadbDatabaseName, mariadbUserName, nativePasswordHash } from '../../sandbox/local-mariadb.js';

describe('local-mariadb SQL text', () => {
  it('accepts user and database names of a letter, then letters, digits and _', () => {
    expect(mariadbUserName('a9s0123456789ab')).toBe('a9s0123456789ab');
    expect(mariadbUserName(`u${'x'.repeat(79)}`)).toHaveLength(80);
    expect(mariadbDatabaseName('a9s_instance1')).toBe('a9s_instance1');
    expect(mariadbDatabaseName(`d${'x'.repeat(63)}`)).toHaveLength(64);
  });

  it.each([["bad'name"], ['a`b'], ['a b'], ['1abc'], ['_x'], [''], ['ä'], ['a;DROP USER root'], ['a\\b'], ['a%']])('rejects the name %j, naming it', (name) => {
    expect(() => mariadbUserName(name)).toThrow(`MariaDB username: ${JSON.stringify(name)} is not a user name here`);
    expect(() => mariadbDatabaseName(name, 'name')).toThrow(`MariaDB name: ${JSON.stringify(name)} is not a database name here`);
  });

  it('rejects names over MariaDB’s lengths (user 80, database 64)', () => {
    expect(() => mariadbUserName(`u${'x'.repeat(80)}`)).toThrow(/is not a user name here .*at most 80 characters/);
    expect(() => mariadbDatabaseName(`d${'x'.repeat(64)}`)).toThrow(/is not a database name here .*at most 64 characters/);
  });

  it('hashes a password as mysql_native_password does (*, upper-case hex of SHA1(SHA1(password)))', () => {
    // the hash MariaDB's PASSWORD('password') returns
    expect(nativePasswordHash('password')).toBe('*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19');
    const odd = `it's a "pass\\word";\n-- ä`;
    const inner = createHash('sha1').update(Buffer.from(odd, 'utf8')).digest();
    expect(nativePasswordHash(odd)).toBe(`*${createHash('sha1').update(inner).digest('hex').toUpperCase()}`);
    expect(() => nativePasswordHash('')).toThrow('MariaDB password: must be a non-empty string');
  });

  it('creates a user with the hash only and every privilege on one database; drops it and ends its connections', () => {
    const odd = `x'); DROP DATABASE mysql; -- \\`;
    const sql = createUserSql('a9sabc', odd, 'a9s_db');
    expect(sql).toEqual([`CREATE USER 'a9sabc'@'%' IDENTIFIED BY PASSWORD '${nativePasswordHash(odd)}'`, "GRANT ALL PRIVILEGES ON `a9s_db`.* TO 'a9sabc'@'%'"]);
    expect(sql.join('\n')).not.toContain('DROP');
    expect(() => createUserSql("a'b", 'pw', 'a9s_db')).toThrow('MariaDB username: "a\'b"');
    expect(() => createUserSql('ab', 'pw', 'a9s-db')).toThrow('MariaDB database: "a9s-db"');
    expect(dropUserSql('a9sabc')).toEqual(["DROP USER IF EXISTS 'a9sabc'@'%'", "KILL USER 'a9sabc'"]);
    expect(() => dropUserSql('a9s abc')).toThrow('MariaDB username: "a9s abc"');
  });

  it('refuses a folder whose Unix socket path would be too long for Linux, naming the folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'klutch-mariadb-unit-'));
    try {
      const long = join(dir, 'x'.repeat(100));
      expect(() => new LocalMariadbServer({ dir: long })).toThrow(
        `LocalMariadbServerOptions.dir: ${JSON.stringify(long)} is too long for the server's Unix socket`,
      );
      expect(() => new LocalMariadbServer({ dir: join(dir, 'ok') })).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
