/**
 * A keep-alive HTTP/1.1 client for the ordinary requests of KubeClient (watches keep node:http, they stream): one
 * pool of connections to one API server, a request written as one string, the response read by a small parser
 * (status line, headers, a body delimited by Content-Length, chunked transfer coding or the connection's end).
 *
 * Why not node:http: a konnector syncing an object sends two requests, and node:https spent 0.23–0.25 ms of CPU on
 * each in a fresh process against a real kube-apiserver (ClientRequest, the agent, OutgoingMessage and
 * IncomingMessage streams, header objects: thousands of lines of JavaScript that run interpreted or as baseline
 * code for the first thousands of requests of a process); this client spent 0.11 ms on the same requests over the
 * same TLS (docs/konnector.md, "CPU per synced object"). The API server is a known peer and the requests are ours:
 * no proxies, no upgrades, no pipelining, no request streaming, so the protocol left to speak is small.
 *
 * Limits: a response head larger than {@link MAX_HEAD_BYTES} or a body larger than the request's `maxBodyBytes`
 * ends the connection with an error; a request with no byte received for `timeoutMs` too. A request that finds its
 * reused connection closed by the server before any byte of the answer is sent again once on a new connection,
 * unless it is a POST (it may have been carried out).
 */
import * as net from 'node:net';
import * as tls from 'node:tls';

/** Largest response head (status line and headers) read, bytes; node:http's default is 16 KiB. */
export const MAX_HEAD_BYTES = 64 * 1024;

export interface Http1PoolOptions {
  readonly protocol: 'http:' | 'https:';
  /** Host name or IP address to connect to (an IPv6 address without brackets). */
  readonly host: string;
  readonly port: number;
  /** The Host header: `URL.host` (the port left out when it is the protocol's default). */
  readonly hostHeader: string;
  /** TLS options for `https:` (secure context or CA/certificate/key, rejectUnauthorized, servername). */
  readonly tls?: tls.ConnectionOptions;
  /** Connections open at most; further requests wait for one. */
  readonly maxSockets: number;
  /** A connection idle this long is closed; 0 keeps idle connections open. */
  readonly idleTimeoutMs: number;
}

export interface Http1Request {
  readonly method: string;
  /** Path and query, already encoded. */
  readonly path: string;
  /** Header lines other than Host and Content-Length, each `Name: value\r\n` (see {@link headerLines}). */
  readonly headers: string;
  readonly body?: string;
  /** Inactivity timeout: no byte received for this long ends the request. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Largest body read, bytes. */
  readonly maxBodyBytes: number;
  /** Read but do not keep the body of a successful (< 400) response. */
  readonly discardBody?: boolean;
}

export interface Http1Response {
  readonly status: number;
  /** Header values by lower-case name (the last one of a repeated header). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body; undefined when there was none or it was discarded. */
  readonly body: Buffer | undefined;
}

/** The response's body exceeded the request's `maxBodyBytes`; the connection was closed. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the response exceeded ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const INVALID_PATH = /[\x00-\x20\x7f]/;

/** `headers` as header lines; a name or value that would break the request's framing throws, naming the header. */
export function headerLines(headers: Readonly<Record<string, string>>): string {
  let out = '';
  for (const name in headers) {
    const value = headers[name]!;
    if (!HEADER_NAME.test(name)) throw new TypeError(`Header name must be a valid HTTP token ["${name}"]`);
    if (INVALID_HEADER_VALUE.test(value)) throw new TypeError(`Invalid character in header content ["${name}"]`);
    out += `${name}: ${value}\r\n`;
  }
  return out;
}

const CRLF2 = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
const NO_BODY_STATUS = (s: number) => s === 204 || s === 304;

interface Conn {
  readonly socket: net.Socket;
  /** The request currently using it. */
  exchange: Exchange | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** It has carried a request before. */
  reused: boolean;
  /** The inactivity timer of the request in flight (refreshed by every chunk received). */
  timer: NodeJS.Timeout | undefined;
}

type BodyMode = 'none' | 'length' | 'chunked' | 'close';

/** One request on one connection: the parser's state and the caller's promise. */
class Exchange {
  private pending: Buffer | undefined;
  private status = 0;
  private headers: Record<string, string> = {};
  private mode: BodyMode | undefined;
  private left = 0;
  private chunkState: 'size' | 'data' | 'crlf' | 'trailer' = 'size';
  private parts: Buffer[] = [];
  private size = 0;
  private keep = true;
  /** Some byte of the response arrived. */
  received = false;
  finished = false;

  constructor(
    private readonly req: Http1Request,
    private readonly done: (err: Error | undefined, res?: Http1Response, reusable?: boolean) => void,
  ) {}

  /** Feeds bytes of the connection. */
  data(chunk: Buffer): void {
    this.received = true;
    if (this.finished) {
      this.keep = false; // bytes after the answer: the connection is out of step, never reused
      return;
    }
    try {
      if (this.mode === undefined) {
        this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
        if (!this.readHead()) return;
        chunk = this.pending!;
        this.pending = undefined;
        if (this.mode === 'none') return this.finish(chunk.length > 0);
      }
      if (this.mode === 'length') this.readLength(chunk);
      else if (this.mode === 'chunked') this.readChunked(chunk);
      else this.keepPart(chunk); // 'close': until the end of the connection
    } catch (e) {
      this.fail(e as Error);
    }
  }

  /** The connection ended (the server closed its side, or it was closed). */
  end(): void {
    if (this.finished) return;
    if (this.mode === 'close') {
      this.keep = false;
      return this.finish();
    }
    const e = new Error('socket hang up') as Error & { code?: string };
    e.code = 'ECONNRESET';
    this.fail(e);
  }

  fail(e: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.done(e);
  }

  /** Parses the head once it is complete; false while it is not. Skips interim (1xx) responses. */
  private readHead(): boolean {
    for (;;) {
      const buf = this.pending!;
      const i = buf.indexOf(CRLF2);
      if (i < 0) {
        if (buf.length > MAX_HEAD_BYTES) throw new Error(`the response head exceeded ${MAX_HEAD_BYTES} bytes`);
        return false;
      }
      if (i > MAX_HEAD_BYTES) throw new Error(`the response head exceeded ${MAX_HEAD_BYTES} bytes`);
      const lines = buf.toString('latin1', 0, i).split('\r\n');
      const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0]!);
      if (!m) throw new Error(`not an HTTP/1.1 response: ${JSON.stringify(lines[0]!.slice(0, 40))}`);
      const status = Number(m[1]);
      this.pending = buf.subarray(i + 4);
      if (status >= 100 && status < 200) {
        if (status === 101) throw new Error('unexpected 101 Switching Protocols');
        continue; // an interim response: the final one follows
      }
      const headers: Record<string, string> = {};
      for (let k = 1; k < lines.length; k++) {
        const line = lines[k]!;
        const c = line.indexOf(':');
        if (c <= 0) throw new Error(`malformed response header line: ${JSON.stringify(line.slice(0, 40))}`);
        headers[line.slice(0, c).toLowerCase()] = line.slice(c + 1).trim();
      }
      this.status = status;
      this.headers = headers;
      if (/(^|,)\s*close\s*(,|$)/i.test(headers['connection'] ?? '') || lines[0]!.startsWith('HTTP/1.0')) this.keep = false;
      const te = headers['transfer-encoding'];
      const cl = headers['content-length'];
      if (this.req.method === 'HEAD' || NO_BODY_STATUS(status)) this.mode = 'none';
      else if (te !== undefined) {
        if (!/(^|,)\s*chunked\s*$/i.test(te)) throw new Error(`unsupported Transfer-Encoding: ${JSON.stringify(te)}`);
        this.mode = 'chunked';
      } else if (cl !== undefined) {
        if (!/^\d+$/.test(cl)) throw new Error(`malformed Content-Length: ${JSON.stringify(cl)}`);
        this.left = Number(cl);
        if (this.left > this.req.maxBodyBytes) throw new ResponseTooLargeError(this.req.maxBodyBytes);
        this.mode = this.left === 0 ? 'none' : 'length';
      } else {
        this.mode = 'close';
        this.keep = false;
      }
      return true;
    }
  }

  private readLength(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (chunk.length > this.left) {
      this.keep = false; // more than announced
      chunk = chunk.subarray(0, this.left);
    }
    this.left -= chunk.length;
    this.keepPart(chunk);
    if (this.left === 0) this.finish();
  }

  private readChunked(chunk: Buffer): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let off = 0;
    while (!this.finished) {
      if (this.chunkState === 'data') {
        const n = Math.min(this.left, buf.length - off);
        if (n === 0) break;
        this.keepPart(buf.subarray(off, off + n));
        off += n;
        this.left -= n;
        if (this.left === 0) this.chunkState = 'crlf';
        continue;
      }
      if (this.chunkState === 'crlf') {
        if (buf.length - off < 2) break;
        if (buf[off] !== 13 || buf[off + 1] !== 10) throw new Error('malformed chunked body: no CRLF after a chunk');
        off += 2;
        this.chunkState = 'size';
        continue;
      }
      const e = buf.indexOf(CRLF, off);
      if (e < 0) {
        if (buf.length - off > 4096) throw new Error('malformed chunked body: a chunk-size or trailer line over 4 KiB');
        break;
      }
      const line = buf.toString('latin1', off, e);
      off = e + 2;
      if (this.chunkState === 'trailer') {
        if (line === '') return this.finish(buf.length > off);
        continue;
      }
      const hex = line.split(';', 1)[0]!.trim();
      if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) throw new Error(`malformed chunk size: ${JSON.stringify(line.slice(0, 20))}`);
      const n = parseInt(hex, 16);
      if (n === 0) this.chunkState = 'trailer';
      else {
        this.left = n;
        this.chunkState = 'data';
      }
    }
    if (!this.finished && off < buf.length) this.pending = buf.subarray(off);
  }

  private keepPart(part: Buffer): void {
    this.size += part.length;
    if (this.size > this.req.maxBodyBytes) throw new ResponseTooLargeError(this.req.maxBodyBytes);
    if (!(this.req.discardBody && this.status < 400)) this.parts.push(part);
  }

  private finish(extra = false): void {
    if (this.finished) return;
    this.finished = true;
    if (extra) this.keep = false;
    const body = this.parts.length === 0 ? undefined : this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    this.done(undefined, { status: this.status, headers: this.headers, body }, this.keep);
  }
}

/** See the file comment. */
export class Http1Pool {
  private readonly idle: Conn[] = [];
  /** Requests waiting for a connection (all are busy): how to hand one over, and the request's timeout. */
  private readonly waiting: Array<{ give: (c: Conn | Error) => void; timeoutMs: number }> = [];
  private open = 0;
  private session: Buffer | undefined;
  private destroyed = false;

  constructor(private readonly o: Http1PoolOptions) {}

  /** Sends one request; resolves with the whole response (any status), rejects on transport failures. */
  async request(req: Http1Request): Promise<Http1Response> {
    if (INVALID_PATH.test(req.path) || !req.path.startsWith('/'))
      throw new TypeError(`Request path contains unescaped characters: ${JSON.stringify(req.path)}`);
    if (req.signal?.aborted) throw abortError();
    const conn = await this.acquire(req);
    try {
      return await this.exchange(conn, req);
    } catch (e) {
      if (!(e instanceof RetryOnNewConnection)) throw e;
      return this.exchange(await this.acquire(req, true), req);
    }
  }

  /** Closes every connection; requests in flight fail. */
  destroy(): void {
    this.destroyed = true;
    for (const c of this.idle.splice(0)) c.socket.destroy();
    for (const w of this.waiting.splice(0)) w.give(new Error('the client was closed'));
  }

  private exchange(conn: Conn, req: Http1Request): Promise<Http1Response> {
    return new Promise<Http1Response>((resolve, reject) => {
      const socket = conn.socket;
      const wasReused = conn.reused;
      conn.reused = true;
      if (socket.destroyed || !socket.writable) {
        // closed between the pool and here: nothing was sent, so any request may go on a new connection
        socket.destroy();
        return reject(wasReused ? new RetryOnNewConnection() : new Error('socket hang up'));
      }
      const onAbort = () => ex.fail(abortError());
      const ex = new Exchange(req, (err, res, reusable) => {
        if (conn.timer) clearTimeout(conn.timer);
        conn.timer = undefined;
        req.signal?.removeEventListener('abort', onAbort);
        conn.exchange = undefined;
        if (err) {
          socket.destroy();
          if (wasReused && !ex.received && req.method !== 'POST' && !(err instanceof ResponseTooLargeError) && !isTimeoutOrAbort(err)) {
            reject(new RetryOnNewConnection());
          } else reject(err);
          return;
        }
        this.release(conn, reusable === true);
        resolve(res!);
      });
      conn.exchange = ex;
      if (req.timeoutMs > 0) {
        conn.timer = setTimeout(() => ex.fail(timeoutError(req.timeoutMs)), req.timeoutMs);
        conn.timer.unref?.();
      }
      req.signal?.addEventListener('abort', onAbort, { once: true });
      let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${this.o.hostHeader}\r\n${req.headers}`;
      if (req.body !== undefined) head += `Content-Length: ${Buffer.byteLength(req.body)}\r\n\r\n${req.body}`;
      else head += req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH' ? 'Content-Length: 0\r\n\r\n' : '\r\n';
      socket.write(head, (err) => {
        if (err) ex.fail(err); // e.g. the connection closed under it (then retried on a new one, see request())
      });
    });
  }

  private acquire(req: Pick<Http1Request, 'signal' | 'timeoutMs'>, fresh = false): Promise<Conn> {
    const signal = req.signal;
    if (this.destroyed) return Promise.reject(new Error('the client was closed'));
    if (!fresh) {
      for (let c = this.idle.pop(); c; c = this.idle.pop()) {
        if (c.idleTimer) clearTimeout(c.idleTimer);
        c.idleTimer = undefined;
        if (!c.socket.destroyed) return Promise.resolve(c);
      }
    }
    if (this.open < this.o.maxSockets) return this.connect(req.timeoutMs);
    return new Promise<Conn>((resolve, reject) => {
      const w = {
        give: (c: Conn | Error) => {
          signal?.removeEventListener('abort', onAbort);
          if (c instanceof Error) reject(c);
          else resolve(c);
        },
        timeoutMs: req.timeoutMs,
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(w);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(abortError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(w);
    });
  }

  /** A new connection; one not established within `timeoutMs` (0: no limit) fails as a timed-out request. */
  private connect(timeoutMs: number): Promise<Conn> {
    this.open++;
    return new Promise<Conn>((resolve, reject) => {
      const o = this.o;
      const socket =
        o.protocol === 'https:'
          ? tls.connect({ ...o.tls, host: o.host, port: o.port, ...(this.session ? { session: this.session } : {}) })
          : net.connect({ host: o.host, port: o.port });
      const conn: Conn = { socket, exchange: undefined, idleTimer: undefined, reused: false, timer: undefined };
      let connected = false;
      const connectTimer = timeoutMs > 0 ? setTimeout(() => socket.destroy(timeoutError(timeoutMs)), timeoutMs) : undefined;
      connectTimer?.unref?.();
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 1000); // as node:http's keep-alive agent: TCP probes find a peer that is gone
      socket.on(o.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
        if (connectTimer) clearTimeout(connectTimer);
        connected = true;
        resolve(conn);
      });
      if (o.protocol === 'https:') socket.on('session', (s: Buffer) => (this.session = s));
      socket.on('data', (c: Buffer) => {
        if (!conn.exchange) return void socket.destroy(); // bytes nobody asked for: the connection is out of step
        conn.timer?.refresh();
        conn.exchange.data(c);
      });
      socket.on('error', (e: Error) => {
        if (!connected) reject(e);
        conn.exchange?.fail(e);
      });
      socket.on('end', () => conn.exchange?.end());
      socket.on('close', () => {
        if (connectTimer) clearTimeout(connectTimer);
        this.open--;
        if (conn.idleTimer) clearTimeout(conn.idleTimer);
        const i = this.idle.indexOf(conn);
        if (i >= 0) this.idle.splice(i, 1);
        if (!connected) reject(new Error(`connection to ${o.host}:${o.port} closed before it was established`));
        conn.exchange?.end();
        this.serveWaiting();
      });
    });
  }

  private release(conn: Conn, reusable: boolean): void {
    if (!reusable || this.destroyed || conn.socket.destroyed) {
      conn.socket.destroy(); // its close event frees the slot for a waiting request
      return;
    }
    const w = this.waiting.shift();
    if (w) return w.give(conn);
    if (this.o.idleTimeoutMs > 0) {
      conn.idleTimer = setTimeout(() => conn.socket.end(), this.o.idleTimeoutMs);
      conn.idleTimer.unref?.();
    }
    this.idle.push(conn);
  }

  /** A connection closed: a waiting request gets a new one. */
  private serveWaiting(): void {
    if (this.destroyed || this.waiting.length === 0 || this.open >= this.o.maxSockets) return;
    const w = this.waiting.shift()!;
    this.connect(w.timeoutMs).then(w.give, w.give);
  }
}

class RetryOnNewConnection extends Error {}

function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  (e as Error & { code?: string }).code = 'ABORT_ERR';
  return e;
}

function timeoutError(ms: number): Error {
  return new Error(`request timed out after ${ms} ms`);
}

function isTimeoutOrAbort(e: Error): boolean {
  return e.name === 'AbortError' || /^request timed out after/.test(e.message);
}
