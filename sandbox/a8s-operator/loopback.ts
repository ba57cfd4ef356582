/**
 * Loopback addresses for the local PostgreSQL servers: each instance gets its own address of 127.0.0.0/8
 * (127.0.0.2 and up) so that it can listen on port 5432, the a8s PostgreSQL port, like the real service.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** true when nothing listens on `address:port` (tried by binding it for a moment). */
export function portFree(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host: address, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** 127.0.0.2, 127.0.0.3, … 127.0.0.254, 127.0.1.1, … (never .0 / .255 host bytes, never 127.0.0.1). */
export function* loopbackAddresses(): Generator<string> {
  for (let b = 0; b < 256; b++) {
    for (let c = b === 0 ? 2 : 1; c < 255; c++) yield `127.0.${b}.${c}`;
  }
}

/**
 * `address:port` pairs handed out by `freeLoopbackAddress()` in this process and not released yet. Every
 * `LocalInstances` of the process (the sandbox a8s operator's, the a9s broker stand-in's) draws from here, so two
 * servers picked at the same moment never get the same address: the probe below only sees a server once it listens,
 * seconds after its address was picked.
 */
const reserved = new Set<string>();

/**
 * Host-wide reservations: a file per `address-port` naming the reserving process's pid, so that two processes
 * (two test lanes, a sandbox beside a test) never pick the same address either. A file whose process is gone is
 * stale and taken over. `KLUTCH_KIT_LOOPBACK_DIR` moves the folder (tests). The folder is shared by every user of the
 * host (mode 1777, as /tmp: anyone may add a reservation, only its owner remove it), so that a root sandbox and an
 * ordinary user's do not pick the same address either.
 */
const lockDir = () => process.env.KLUTCH_KIT_LOOPBACK_DIR ?? path.join(os.tmpdir(), 'klutch-kit-loopback');
const lockFile = (key: string) => path.join(lockDir(), key.replace(':', '-'));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function ensureLockDir(): void {
  if (fs.existsSync(lockDir())) return;
  fs.mkdirSync(lockDir(), { recursive: true });
  try {
    fs.chmodSync(lockDir(), 0o1777); // mkdir's mode is cut by the umask
  } catch {
    // made by another user at the same moment
  }
}

function lockHostWide(key: string): boolean {
  ensureLockDir();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile(key), String(process.pid), { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number(fs.readFileSync(lockFile(key), 'utf8'));
    if (pid === process.pid || (Number.isInteger(pid) && pid > 0 && alive(pid))) return false;
    try {
      fs.rmSync(lockFile(key), { force: true }); // stale: its process is gone
    } catch {
      return false; // another user's stale reservation (the sticky folder keeps it): try another address
    }
  }
  return false;
}

function unlockHostWide(key: string): void {
  try {
    if (Number(fs.readFileSync(lockFile(key), 'utf8')) === process.pid) fs.rmSync(lockFile(key), { force: true });
  } catch {
    // already gone
  }
}

process.on('exit', () => {
  for (const key of reserved) unlockHostWide(key);
});

/**
 * The first loopback address from 127.0.0.2 up that is neither in `taken` (held by the caller), nor handed out
 * to another caller of this process (until `releaseLoopbackAddress()`), nor in use on `port` by another process.
 * The address is reserved for the caller from the moment it is picked.
 */
export async function freeLoopbackAddress(port: number, taken: ReadonlySet<string>, limit = 2048): Promise<string> {
  let tried = 0;
  for (const a of loopbackAddresses()) {
    const key = `${a}:${port}`;
    if (taken.has(a) || reserved.has(key)) continue;
    // reserved before the probe: a caller probing at the same moment moves on to the next address
    reserved.add(key);
    if (lockHostWide(key)) {
      if (await portFree(a, port)) return a;
      unlockHostWide(key);
    }
    reserved.delete(key);
    if (++tried >= limit) break;
  }
  throw new Error(`sandbox a8s operator: no free loopback address with port ${port} found (tried ${tried} addresses from 127.0.0.2 up)`);
}

/** Gives an address of `freeLoopbackAddress()` back (its server is gone). */
export function releaseLoopbackAddress(address: string, port: number): void {
  const key = `${address}:${port}`;
  if (reserved.delete(key)) unlockHostWide(key);
}
