// Preloaded (`node --import`) into a backend child process by tests: the API request named by
// $HOLD_REQUEST ("POST /api/v1/namespaces") is held — not sent — until the file $HOLD_UNTIL_FILE
// exists; "held <request>" is printed on stderr when it starts waiting. So a test can keep a bind in
// flight at an exact point (e.g. while it sends SIGTERM) without a hook in the backend's code.
// It works on the socket (any HTTP/1.1 client: KubeClient's pool, runtime/core/http1.ts, and node:http both write a
// request's line, headers and body in one write): the write that starts with the request line waits.
import fs from 'node:fs';
import net from 'node:net';

const want = process.env.HOLD_REQUEST ?? '';
const file = process.env.HOLD_UNTIL_FILE ?? '';

/** Calls `send` once $HOLD_UNTIL_FILE exists. */
function hold(send) {
  process.stderr.write(`held ${want}\n`);
  const timer = setInterval(() => {
    if (!fs.existsSync(file)) return;
    clearInterval(timer);
    send();
  }, 50);
}

const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  const line = typeof chunk === 'string' ? chunk.slice(0, chunk.indexOf('\r\n')) : '';
  const [method, target] = line.split(' ');
  if (!want || `${method} ${(target ?? '').split('?')[0]}` !== want) return write.call(this, chunk, ...rest);
  hold(() => write.call(this, chunk, ...rest));
  return true;
};
