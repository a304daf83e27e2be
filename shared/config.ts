/**
 * Configuration read once per container. A missing required variable fails loudly at cold start,
 * not at the first request that happens to need it.
 */
function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`missing required environment variable ${name}`);
  return value;
}

function optional(name: string, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

export const config = {
  get mainTable(): string {
    return required('MAIN_TABLE');
  },
  get idempotencyTable(): string {
    return required('IDEMPOTENCY_TABLE');
  },
  get dynamodbEndpoint(): string | undefined {
    return process.env['DYNAMODB_ENDPOINT'] || undefined;
  },
  get tokenIssuer(): string {
    return optional('TOKEN_ISSUER', 'https://dispatch.internal');
  },
  get tokenAudience(): string {
    return optional('TOKEN_AUDIENCE', 'dispatch-api');
  },
  /** Where the signing key lives: a Secrets Manager secret in the cloud, a file locally. */
  get signingKeySecretArn(): string | undefined {
    return process.env['SIGNING_KEY_SECRET_ARN'] || undefined;
  },
  /** The page-token secret: Secrets Manager in the cloud, a file locally (shared/http/page-token-key.ts). */
  get pageTokenSecretArn(): string | undefined {
    return process.env['PAGE_TOKEN_SECRET_ARN'] || undefined;
  },
  get pageTokenKeyFile(): string | undefined {
    return process.env['PAGE_TOKEN_KEY_FILE'] || undefined;
  },
  get signingKeyFile(): string | undefined {
    return process.env['SIGNING_KEY_FILE'] || undefined;
  },
  /** How long the authorizer trusts a cached per-user token generation; the contract allows at most 60 s. */
  get tokenGenerationCacheMs(): number {
    return Math.min(60_000, Number(optional('TOKEN_GENERATION_CACHE_MS', '60000')));
  },
  /**
   * How long a bearer token lives (`BEARER_TTL_S`): the contract's hour by default and at most; an operator may
   * shorten it, and tests of token renewal do (at least 5 s).
   */
  get bearerTtlSeconds(): number {
    const value = Number(optional('BEARER_TTL_S', '3600'));
    return Number.isInteger(value) && value >= 5 && value <= 3600 ? value : 3600;
  },
  get localMode(): boolean {
    return process.env['DISPATCH_LOCAL'] === '1';
  },
};
