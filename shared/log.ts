import { Logger } from '@aws-lambda-powertools/logger';

/** The single logger: one structured JSON line per event. Never pass it a secret, a password or a token. */
export const logger = new Logger({
  serviceName: 'dispatch',
  logLevel: (process.env['LOG_LEVEL'] as 'INFO' | 'DEBUG' | 'WARN' | 'ERROR' | 'SILENT' | undefined) ?? 'INFO',
});
