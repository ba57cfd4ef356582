// Preloaded (`node --import`) into a backend child process by tests: the API request named by
// $HOLD_REQUEST ("POST /api/v1/namespaces") is held — not sent — until the file $HOLD_UNTIL_FILE
// exists; "held <request>" is printed on stderr when it starts waiting. So a test can keep a bind in
// flight at an exact point (e.g. while it sends SIGTERM) without a hook in the backend's code.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const want = process.env.HOLD_REQUEST ?? '';
const file = process.env.HOLD_UNTIL_FILE ?? '';
for (const mod of [http, https]) {
  const orig = mod.request;
  mod.request = function (...args) {
    const req = orig.apply(this, args);
    const end = req.end;
    req.end = function (...endArgs) {
      if (!want || `${req.method} ${req.path.split('?')[0]}` !== want) return end.apply(this, endArgs);
      process.stderr.write(`held ${want}\n`);
      const timer = setInterval(() => {
        if (!fs.existsSync(file)) return;
        clearInterval(timer);
        end.apply(req, endArgs);
      }, 50);
      return req;
    };
    return req;
  };
}
