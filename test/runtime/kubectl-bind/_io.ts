// The kubectl-bind unit tests' terminal: stdout, stderr (collected) and a non-interactive, empty stdin.
import { PassThrough } from 'node:stream';

export const io = () => {
  const out = new PassThrough();
  const err = new PassThrough();
  const inp = Object.assign(new PassThrough(), { isTTY: false });
  inp.end('');
  let e = '';
  err.on('data', (d) => (e += d));
  return { io: { out, err, in: inp }, err: () => e };
};
