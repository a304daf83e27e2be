/**
 * Starts the whole service locally: emulators, tables, the seeded SysAdmin, and the HTTP host. Used by
 * `npm start` (bin/local.ts), the end-to-end tests and the benchmarks.
 */
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Emulators, ensureTables, LOCAL_CREDENTIALS, startEmulators } from '#lib/local/emulators';
import { createHostServer, preloadHandlers } from '#lib/local/host';
import { attachExternalS3, type LocalS3, startLocalS3 } from '#lib/local/s3';
import { startStreamPoller } from '#lib/local/streams';
import { gateway } from '#lib/local/websocket';
import { buildConsole } from '#lib/ops/build';
import { ROOT } from '#lib/paths';
import { locationsTable } from '#shared/db/tables';
import { asFunction } from '#shared/local-invocation';
import { POSITIONS_BATCHING_WINDOW_S } from '#shared/notifications/positions-window';
import { opsConfig } from '#shared/ops/page';
import { drainLocalQueue } from '#shared/ports/queue';

export interface LocalOptions {
  port: number;
  /**
   * The address the host listens on: 127.0.0.1 unless told otherwise (`HOST`; `0.0.0.0` or `::` for every interface,
   * e.g. to reach it from a phone). The local-only endpoints refuse web pages whatever it is (lib/local/host.ts).
   */
  host?: string;
  dataDir: string;
  fresh: boolean;
  /** false: DynamoDB in memory (tests). */
  persistent: boolean;
  adminEmail: string;
  adminPassword: string;
  tablePrefix: string;
  /** Reuse a running DynamoDB emulator instead of starting one (tests share one). */
  endpoints?: { dynamodb: string };
  /**
   * An S3-compatible server to use instead of the in-process one: its bucket is created if missing and its uploads
   * are watched (lib/local/s3.ts).
   */
  externalS3?: string;
  /** The in-process S3's port: the same across restarts (`S3_PORT`, default `PORT` + 1); 0 picks a free one. */
  s3Port?: number;
  /**
   * Tests: puts something (a fault proxy) in front of the in-process S3; it gets S3's endpoint and returns the one
   * the functions and presigned URLs use.
   */
  frontS3?: (endpoint: string) => Promise<string>;
  /** Benchmarks: puts something (a counting proxy) in front of DynamoDB, as `frontS3` does for S3. */
  frontDynamoDB?: (endpoint: string) => Promise<string>;
}

export interface RunningHost {
  url: string;
  port: number;
  /** The S3 endpoint uploads go to (awscli: `--endpoint-url`). */
  s3Endpoint: string;
  /** The address the server listens on. */
  address: string;
  /**
   * Holds the host's own sweep (every two seconds) until `resumeSweep`, once any sweep under way has ended: for a test
   * that measures what one request does by itself (a re-offer's wave, say) while the sweep could take it over.
   */
  pauseSweep(): Promise<void>;
  resumeSweep(): void;
  stop(): Promise<void>;
}

export const UPLOAD_BUCKET = 'dispatch-uploads';
export const DEFAULT_HOST = '127.0.0.1';

/** The name this process reaches its own server by: `localhost` for a loopback or every-interface address. */
function reachableName(address: string): string {
  if (['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(address)) return 'localhost';
  return address.includes(':') ? `[${address}]` : address;
}

const PORT = Number(process.env['PORT'] ?? 3000);

export const defaultOptions = (): LocalOptions => ({
  port: PORT,
  s3Port: Number(process.env['S3_PORT'] ?? PORT + 1),
  host: process.env['HOST'] || DEFAULT_HOST,
  dataDir: resolve(process.env['DISPATCH_DATA_DIR'] ?? '.data'),
  fresh: false,
  persistent: true,
  adminEmail: process.env['DISPATCH_ADMIN_EMAIL'] || 'admin@dispatch.local',
  adminPassword: process.env['DISPATCH_ADMIN_PASSWORD'] || 'admin-password-change-me',
  tablePrefix: 'dispatch-',
  externalS3: process.env['S3_ENDPOINT'] || undefined,
});

/** The environment the functions read, pointed at the local stand-ins. Set before any handler module is loaded. */
export function localEnvironment(
  endpoints: { dynamodb: string; s3: string },
  tableNames: Record<string, string>,
  dataDir: string,
) {
  Object.assign(process.env, {
    DISPATCH_LOCAL: '1',
    // The request log line already says what the metrics would; EMF lines are for CloudWatch.
    POWERTOOLS_METRICS_DISABLED: process.env['POWERTOOLS_METRICS_DISABLED'] ?? 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // One process hosts the authorizer and the functions: a revocation may show at once (the cloud allows 60 s).
    TOKEN_GENERATION_CACHE_MS: process.env['TOKEN_GENERATION_CACHE_MS'] ?? '1000',
    AWS_REGION: process.env['AWS_REGION'] ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    AWS_LAMBDA_FUNCTION_NAME: 'dispatch-local',
    DYNAMODB_ENDPOINT: endpoints.dynamodb,
    S3_ENDPOINT: endpoints.s3,
    UPLOAD_BUCKET,
    SIGNING_KEY_FILE: resolve(dataDir, 'keys', 'signing-keys.json'),
    PAGE_TOKEN_KEY_FILE: resolve(dataDir, 'keys', 'page-token.key'),
    SECRET_BOX_KEY_FILE: resolve(dataDir, 'keys', 'secret-box.key'),
    ...tableNames,
  });
}

export async function startLocal(options: LocalOptions): Promise<RunningHost> {
  opsConfig(); // the /ops page's tile and WebSocket URLs: one that is not a URL stops the start, loudly
  buildConsole(); // the /ops page's script, from lib/ops/console/
  if (options.fresh) rmSync(options.dataDir, { recursive: true, force: true });
  let emulators: Emulators | undefined;
  let dynamodb = options.endpoints?.dynamodb;
  if (!dynamodb) {
    emulators = await startEmulators({
      dataDir: options.dataDir,
      persistent: options.persistent,
      buckets: [UPLOAD_BUCKET],
      s3: false,
    });
    dynamodb = emulators.dynamodbEndpoint;
  }
  // S3 runs in this process (unless an external one is named), so that uploads raise the trigger's events here.
  let localS3: LocalS3 | undefined = options.externalS3
    ? undefined
    : await startLocalS3(resolve(options.dataDir, 's3'), [UPLOAD_BUCKET], options.s3Port ?? 0).catch(
        (error: Error & { code?: string }) => {
          throw error.code === 'EADDRINUSE'
            ? new Error(`the S3 port ${options.s3Port} is in use: set S3_PORT to a free one`)
            : error;
        },
      );
  const s3 = localS3?.endpoint ?? options.externalS3!;
  const endpoints = {
    dynamodb: options.frontDynamoDB ? await options.frontDynamoDB(dynamodb) : dynamodb,
    s3: options.frontS3 ? await options.frontS3(s3) : s3,
  };
  try {
    const tableNames = await ensureTables(endpoints.dynamodb, options.tablePrefix);
    localEnvironment(endpoints, tableNames, options.dataDir);
    // npm start's own data (not a test's shared emulators): what the mail and push outboxes hold survives a restart.
    if (options.persistent) process.env['LOCAL_OUTBOX_DIR'] = resolve(options.dataDir, 'outbox');
    else delete process.env['LOCAL_OUTBOX_DIR'];
    // The functions' environment is set: the external S3's uploads can be recorded from here on.
    if (options.externalS3) localS3 = await attachExternalS3(endpoints.s3, UPLOAD_BUCKET);
    const { ensureSysAdmin } = await import('#shared/accounts/seed');
    const [server] = await Promise.all([
      listen(options.port, options.host || DEFAULT_HOST),
      asFunction('system/seed-admin', () => ensureSysAdmin(options.adminEmail, options.adminPassword)),
      preloadHandlers(),
      // The queue's consumer (in the cloud, workers/queue on the SQS queue): loading it registers the local worker
      // of every message kind, whichever route modules are loaded.
      import(pathToFileURL(join(ROOT, 'functions', 'workers', 'queue.ts')).href),
      // The route queue's consumer (workers/routes): it solves each build in a worker thread, so this host keeps
      // answering every other request while a build solves.
      import(pathToFileURL(join(ROOT, 'functions', 'workers', 'routes.ts')).href),
    ]);
    const { port, address } = server.address() as AddressInfo;
    const origin = `http://${reachableName(options.host || DEFAULT_HOST)}:${port}`;
    // Locally the sweep (offer expiry, the mail outbox) runs every two seconds (the cloud's schedule: every minute).
    const { handler: sweepOnce } = (await import(
      pathToFileURL(join(ROOT, 'functions', 'workers', 'expire-offers.ts')).href
    )) as { handler: () => Promise<unknown> };
    // One sweep at a time, as the cloud's schedule has it in practice: a sweep that outlasts the period (a big day, a
    // loaded machine) is not joined by another that would redo its work.
    let sweeping = false;
    let sweepPaused = false;
    const sweep = setInterval(() => {
      if (sweeping || sweepPaused) return;
      sweeping = true;
      asFunction('workers/expire-offers', sweepOnce)
        .catch((error: unknown) => console.error('sweep failed', error))
        .finally(() => {
          sweeping = false;
        });
    }, 2000);
    sweep.unref();
    // The functions reach the WebSocket connections through the management API this host serves.
    process.env['WEBSOCKET_MANAGEMENT_ENDPOINT'] = origin;
    // Live positions: the locations table's stream feeds the same handler the cloud's event source calls, one batch a
    // window as the cloud's `maxBatchingWindow`.
    const positions = await startStreamPoller({
      endpoint: endpoints.dynamodb,
      tableName: tableNames[locationsTable.envVar]!,
      handlerPath: 'realtime/positions-stream',
      intervalMs: POSITIONS_BATCHING_WINDOW_S * 1000,
    });
    return {
      url: origin,
      port,
      s3Endpoint: endpoints.s3,
      address,
      pauseSweep: async () => {
        sweepPaused = true;
        while (sweeping) await new Promise((resolve) => setTimeout(resolve, 20));
      },
      resumeSweep: () => {
        sweepPaused = false;
      },
      stop: async () => {
        clearInterval(sweep);
        await positions.stop();
        await gateway.close();
        await drainLocalQueue();
        await localS3?.stop();
        server.closeAllConnections();
        await new Promise<void>((done) => server.close(() => done()));
        await emulators?.stop();
      },
    };
  } catch (error) {
    await localS3?.stop();
    await emulators?.stop();
    throw error;
  }
}

function listen(port: number, host: string) {
  const server = createHostServer(host);
  return new Promise<ReturnType<typeof createHostServer>>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done(server));
  });
}
