/**
 * Small helpers every part of the harness uses (cluster, node, Crossplane as processes or as pods,
 * provider-anynines, cluster DNS): `sleep`, `freePort`, `logTail` and the forwarder program. A leaf:
 * it imports no other harness file, so that none of them has to import another for these.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => delay(ms);

const handedOut = new Set<number>();

/** A free TCP port on 127.0.0.1 not handed out before by this process. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address() as net.AddressInfo;
        srv.close(() => resolve(addr.port));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('realinfra: could not find a free port on 127.0.0.1');
}

/** Last `lines` lines of a log file ('' when missing). */
export function logTail(file: string, lines = 40): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const len = Math.min(size, 64 * 1024);
      const buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, size - len);
      return buf.toString('utf8').replace(/\s+$/, '').split('\n').slice(-lines).join('\n');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '(no log output)';
  }
}

/**
 * The forwarders between the host's loopback and a namespace, as a small Node process of its own: in the
 * harness's process they would stop whenever its event loop is blocked (a test's execFileSync, a long
 * synchronous synth), and a blocked call that itself needs the registry would wait forever.
 * argv[1]: JSON [{ lh, lp, th, tp }]: listen on TCP lh:lp, connect to TCP th:tp; instead of lh/lp, `lpath` listens on
 * a unix socket (a stale socket file is replaced), instead of th/tp, `tpath` connects to one. Prints "ready" once every
 * route listens.
 */
export const FORWARDER_JS = `
const net = require('node:net');
const fs = require('node:fs');
const routes = JSON.parse(process.argv[1]);
let listening = 0;
for (const r of routes) {
  const server = net.createServer((inbound) => {
    const outbound = r.tpath ? net.connect(r.tpath) : net.connect(r.tp, r.th);
    const end = () => { inbound.destroy(); outbound.destroy(); };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  const where = r.lpath ? r.lpath : r.lh + ':' + r.lp;
  server.on('error', (e) => { console.error('cannot listen on ' + where + ': ' + e.message); process.exit(1); });
  const ready = () => { if (++listening === routes.length) console.log('ready'); };
  if (r.lpath) { fs.rmSync(r.lpath, { force: true }); server.listen(r.lpath, ready); }
  else server.listen(r.lp, r.lh, ready);
}
process.on('SIGTERM', () => process.exit(0));
`;

/** Whether a process with this pid exists (one of another user counts). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What the exit hook ends: a harness part with a synchronous last resort. */
export interface KilledAtExit {
  killSync(): void;
}

/** The harness parts started and not stopped yet, killed when the process exits. */
const live = new Set<KilledAtExit>();
let exitHook = false;

/** Has `part` killed (`killSync()`) when the process exits before it is stopped (then: `forgetAtExit`). */
export function killAtExit(part: KilledAtExit): void {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const p of live) p.killSync();
    });
  }
  live.add(part);
}

/** Out of the set the exit hook kills (once stopped). */
export function forgetAtExit(part: KilledAtExit): void {
  live.delete(part);
}
