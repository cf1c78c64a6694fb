import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(opts: { name: string; level?: string }): Logger {
  return pino({ name: opts.name, level: opts.level ?? "info" });
}
