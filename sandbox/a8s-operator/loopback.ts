/**
 * Loopback addresses for the local PostgreSQL servers: each instance gets its own address of 127.0.0.0/8
 * (127.0.0.2 and up) so that it can listen on port 5432, the a8s PostgreSQL port, like the real service.
 */
import * as net from 'node:net';

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
 * The first loopback address from 127.0.0.2 up that is neither in `taken` (held by this operator) nor in use
 * on `port` by another process.
 */
export async function freeLoopbackAddress(port: number, taken: ReadonlySet<string>, limit = 2048): Promise<string> {
  let tried = 0;
  for (const a of loopbackAddresses()) {
    if (taken.has(a)) continue;
    if (await portFree(a, port)) return a;
    if (++tried >= limit) break;
  }
  throw new Error(`sandbox a8s operator: no free loopback address with port ${port} found (tried ${tried} addresses from 127.0.0.2 up)`);
}
