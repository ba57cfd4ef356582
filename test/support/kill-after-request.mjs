// Preloaded (`node --import`) into a backend child process by tests: when the process has received
// the answer to the API request named by $KILL_AFTER_REQUEST ("POST /api/v1/namespaces"; "…#2" for
// the second such request), it sends itself SIGKILL — a real `kill -9` at an exact point of its work
// (e.g. right after a bind created the cluster namespace), without a hook in the backend's code.
import http from 'node:http';
import https from 'node:https';

const [want, nth = '1'] = (process.env.KILL_AFTER_REQUEST ?? '').split('#');
let seen = 0;
for (const mod of [http, https]) {
  const orig = mod.request;
  mod.request = function (...args) {
    const req = orig.apply(this, args);
    req.on('response', (res) => {
      if (`${req.method} ${req.path.split('?')[0]}` === want && res.statusCode < 300 && ++seen === Number(nth)) {
        res.on('end', () => process.kill(process.pid, 'SIGKILL'));
      }
    });
    return req;
  };
}
