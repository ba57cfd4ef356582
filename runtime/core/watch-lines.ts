/**
 * Splits a watch stream's bytes into its lines (one JSON event each).
 *
 * Written by hand instead of using node:readline on purpose: readline decodes every chunk to a string,
 * splits it with a regular expression and keeps line-editing state meant for terminals; here a line is
 * one event, so finding the newline in the bytes and decoding each complete line once is enough. In the
 * konnector (thousands of events per second during a bulk sync) this took watch decoding from one of
 * its largest costs per synced object to a small one (`npm run bench:konnector`, docs/konnector.md).
 */
export class LineSplitter {
  /** The unfinished line: the chunks (or their tails) since the last newline. */
  private parts: Buffer[] = [];
  private pendingBytes = 0;

  /**
   * @param onLine called with each line in order, without its `\n` (a `\r` before it is kept: JSON
   *   parsing ignores it, as it ignores a blank line's whitespace)
   * @param maxLineBytes the longest unfinished line {@link push} accepts
   */
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes: number,
  ) {}

  /** Feeds a chunk; false once the unfinished line is longer than `maxLineBytes` (the caller drops the stream). */
  push(chunk: Buffer): boolean {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      let line: string;
      if (this.parts.length === 0) line = chunk.toString('utf8', start, nl);
      else {
        this.parts.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.parts).toString('utf8');
        this.parts = [];
        this.pendingBytes = 0;
      }
      start = nl + 1;
      this.onLine(line);
    }
    if (start < chunk.length) {
      this.parts.push(start === 0 ? chunk : chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
    }
    return this.pendingBytes <= this.maxLineBytes;
  }

  /** The stream ended: a last line without a newline is delivered too. */
  end(): void {
    if (this.parts.length === 0) return;
    const line = Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    this.pendingBytes = 0;
    this.onLine(line);
  }
}
