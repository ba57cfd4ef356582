/**
 * Unexpected errors (bugs, not client errors or API-server refusals) of the backend's HTTP server,
 * controllers and process: each is logged with its context, counted in
 * `klutch_backend_unexpected_errors_total{source}` and reported on `/readyz` (the last one, with
 * when and where). They do not make the replica unready: a request that trips a bug must not let a
 * client take every replica out of its Service.
 */
import type { Logger } from 'pino';
import type { BackendMetrics } from './metrics.js';

export interface UnexpectedError {
  /** `http`, `controller/<name>`, `process`. */
  source: string;
  message: string;
  at: Date;
  context: Record<string, unknown>;
}

export class UnexpectedErrors {
  private lastError: UnexpectedError | undefined;
  private total = 0;

  constructor(
    private readonly logger: Logger,
    private readonly metrics: BackendMetrics,
  ) {}

  /** Logs `err` at error level with `context`, counts it, and remembers it for /readyz. */
  record(source: string, err: unknown, context: Record<string, unknown> = {}): void {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    this.total++;
    this.lastError = { source, message, at: new Date(), context };
    this.metrics.unexpectedErrors.inc({ source: source.split('/')[0] });
    this.logger.error({ source, ...context, err: err instanceof Error ? (err.stack ?? err.message) : String(err) }, 'unexpected error');
  }

  get count(): number {
    return this.total;
  }

  get last(): UnexpectedError | undefined {
    return this.lastError;
  }

  /** One line for /readyz. */
  summary(now = Date.now()): string {
    const l = this.lastError;
    if (!l) return 'unexpected-errors: none';
    const ago = Math.round((now - l.at.getTime()) / 1000);
    const where = [l.source, ...Object.entries(l.context).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)].join(' ');
    return `unexpected-errors: ${this.total}, last ${ago}s ago in ${where}: ${l.message.slice(0, 300)}`;
  }
}

export { isProgrammingError } from '../core/controller.js';

/** A failure to reach a server (connection refused/reset, timeout, DNS), which a retry may cure (KubeClient reports these as ApiError code 0). */
export function isNetworkError(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return (
    (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ENOTFOUND|UND_ERR_SOCKET)$/.test(code)) ||
    (e instanceof Error && /^request timed out after/.test(e.message))
  );
}
