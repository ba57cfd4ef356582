/** pino JSON logger. Level from the argument, else $LOG_LEVEL, else `info`. */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export function createLogger(name: string, level?: string): Logger {
  return pino({
    name,
    level: level ?? process.env.LOG_LEVEL ?? 'info',
    base: { component: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that drops everything (tests, libraries used without a logger). */
export const silentLogger: Logger = pino({ level: 'silent' });
