// Preloaded (`node --import`) into a backend child process by tests: when the process has received
// the answer to the API request named by $KILL_AFTER_REQUEST ("POST /api/v1/namespaces"; "…#2" for
// the second such request), it sends itself SIGKILL — a real `kill -9` at an exact point of its work
// (e.g. right after a bind created the cluster namespace), without a hook in the backend's code.
// It works on the socket (any HTTP/1.1 client: KubeClient's pool, runtime/core/http1.ts, and node:http both write a
// request's line, headers and body in one write): the request line written, the answer's status line read next.
import net from 'node:net';

const [want, nth = '1'] = (process.env.KILL_AFTER_REQUEST ?? '').split('#');
let seen = 0;
const answered = (status) => status < 300 && ++seen === Number(nth);

const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  const line = typeof chunk === 'string' ? chunk.slice(0, chunk.indexOf('\r\n')) : '';
  const [method, target] = line.split(' ');
  if (want && `${method} ${(target ?? '').split('?')[0]}` === want) {
    // the answer's status line is in the first bytes the socket reads after this write
    this.prependOnceListener('data', (c) => {
      if (answered(Number(c.toString('latin1', 9, 12)))) setImmediate(() => process.kill(process.pid, 'SIGKILL'));
    });
  }
  return write.call(this, chunk, ...rest);
};
