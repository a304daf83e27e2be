/**
 * The embedded stand-ins for the cloud: a DynamoDB-compatible server (the dynoxide binary, or whatever
 * DYNAMODB_ENDPOINT names) and an S3-compatible server (s3rver), each a child process the host owns and stops.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, existsSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { constants } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS } from '#lib/local/s3-signatures';
import { createTableInput, tables } from '#shared/db/tables';

const require = createRequire(import.meta.url);
// Node 20 is what this machine has; the SDK's notice about its future support says nothing actionable here.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

export interface Emulators {
  dynamodbEndpoint: string;
  s3Endpoint: string;
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  /** Folder for the SQLite database and the S3 objects; omitted: DynamoDB in memory and a temporary S3 folder. */
  dataDir: string;
  persistent: boolean;
  buckets: string[];
  /** Start the S3 emulator as a child process (the test runner's shared one); the host runs its own in process. */
  s3?: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The platform the emulator binary is chosen for: this one, or `DISPATCH_EMULATOR_PLATFORM` (`<platform>-<arch>`, as
 * `darwin-arm64`), which lets a test see what a Mac or an arm64 machine gets without being one.
 */
function emulatorPlatform(): string {
  return process.env['DISPATCH_EMULATOR_PLATFORM'] ?? `${process.platform}-${process.arch}`;
}

/** dynoxide's binary, where one is installed for this platform (`@dynoxide/linux-x64` is the only one published). */
function dynoxideBinary(): string | undefined {
  if (emulatorPlatform() !== 'linux-x64') return undefined;
  try {
    const binary = join(dirname(require.resolve('@dynoxide/linux-x64/package.json')), 'dynoxide');
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

async function waitFor(url: string, child: ChildProcess | undefined, what: string, waitMs = 15_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(500) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(`${what} did not start at ${url}`);
}

/**
 * An emulator process that dies with this one: a host or benchmark that crashes (an uncaught error skips its
 * `stop`) must not leave a server behind, busy and holding its port.
 */
function spawnOwned(command: string, args: string[]): ChildProcess {
  exitOnSignals();
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.removeListener('exit', reap));
  return child;
}

/**
 * A process ended by a signal it does not handle dies without its 'exit' event, and so without reaping its children
 * (a CI timeout's SIGTERM, a closed terminal's SIGHUP). When such a signal comes and nothing else handles it, exit as
 * the signal would, through 'exit'. Judged when the signal comes, not now: `npm start` registers its graceful stop
 * after the emulators are running, and that one then ends the process as it chooses.
 */
let watchingSignals = false;
function exitOnSignals() {
  if (watchingSignals) return;
  watchingSignals = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (process.listenerCount(signal) === 1) process.exit(128 + constants.signals[signal]);
    });
  }
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

export async function startEmulators(options: EmulatorOptions): Promise<Emulators> {
  mkdirSync(options.dataDir, { recursive: true });
  const [dynamo, s3] = await Promise.all([
    startDynamo(options),
    options.s3 === false ? Promise.resolve({ endpoint: '', child: undefined }) : startS3(options),
  ]);
  return {
    dynamodbEndpoint: dynamo.endpoint,
    s3Endpoint: s3.endpoint,
    stop: async () => {
      await Promise.all([dynamo.stop ? dynamo.stop() : stopChild(dynamo.child), stopChild(s3.child)]);
    },
  };
}

type Started = { endpoint: string; child?: ChildProcess; stop?: () => Promise<void> };

async function startDynamo(options: EmulatorOptions): Promise<Started> {
  const external = process.env['DYNAMODB_ENDPOINT'];
  if (external) return { endpoint: external };
  const binary = dynoxideBinary();
  if (!binary) return startDynamoDbLocal(options);
  const port = await freePort();
  const args = ['serve', '--host', '127.0.0.1', '--port', String(port)];
  if (options.persistent) args.push('--db-path', resolve(options.dataDir, 'dynamodb.sqlite'));
  const child = spawnOwned(binary, args);
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(endpoint, child, 'dynoxide');
  return { endpoint, child };
}

/** AWS's DynamoDB Local image, the emulator where no dynoxide binary fits the platform. */
export const DYNAMODB_LOCAL_IMAGE = 'amazon/dynamodb-local';

/** The one thing to run by hand where neither dynoxide nor Docker can serve, said in full. */
export function noEmulatorMessage(why: string): string {
  return (
    `no DynamoDB emulator for ${emulatorPlatform()}: ${why}. The bundled one (@dynoxide/linux-x64) runs on Linux x64 ` +
    `only. Start AWS's DynamoDB Local yourself and point the service at it:\n` +
    `  docker run --rm -p 8000:8000 ${DYNAMODB_LOCAL_IMAGE} -jar DynamoDBLocal.jar -sharedDb -inMemory\n` +
    `  DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm start   (or npm test)\n` +
    '(or install Docker: npm start and npm test then run that image themselves, and stop it after)'
  );
}

/** An executable named `name` on the PATH, or undefined. */
function onPath(name: string): string | undefined {
  const suffixes = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    for (const suffix of suffixes) {
      const candidate = join(dir, `${name}${suffix}`);
      try {
        accessSync(candidate, fsConstants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/**
 * DynamoDB Local in a container for as long as this process runs (`docker run --rm`, a name of its own, published on
 * 127.0.0.1 only); stopped with `docker stop` (the CLI's own death does not stop a container), also when this process
 * exits without its `stop`. Kept under `.data/dynamodb-local` between runs unless the host starts fresh.
 */
async function startDynamoDbLocal(options: EmulatorOptions): Promise<Started> {
  const docker = onPath('docker');
  if (!docker) throw new Error(noEmulatorMessage('Docker is not on the PATH'));
  const port = await freePort();
  const name = `dispatch-dynamodb-${process.pid}-${port}`;
  const args = ['run', '--rm', '--name', name, '-p', `127.0.0.1:${port}:8000`];
  const jar = ['-jar', 'DynamoDBLocal.jar', '-sharedDb'];
  if (options.persistent) {
    const folder = resolve(options.dataDir, 'dynamodb-local');
    mkdirSync(folder, { recursive: true });
    // As this user, so that the files it writes under .data are this user's (and --fresh can remove them).
    const user = process.getuid && process.getgid ? ['-u', `${process.getuid()}:${process.getgid()}`] : [];
    args.push(...user, '-v', `${folder}:/data`, DYNAMODB_LOCAL_IMAGE, ...jar, '-dbPath', '/data');
  } else {
    args.push(DYNAMODB_LOCAL_IMAGE, ...jar, '-inMemory');
  }
  const child = spawnOwned(docker, args);
  const remove = () => {
    spawnSync(docker, ['rm', '-f', name], { stdio: 'ignore', timeout: 10_000 });
  };
  process.once('exit', remove);
  const stop = async () => {
    process.removeListener('exit', remove);
    await new Promise<void>((done) => {
      const stopper = spawn(docker, ['stop', '-t', '2', name], { stdio: 'ignore' });
      stopper.once('exit', () => done());
      stopper.once('error', () => done());
    });
    await stopChild(child);
  };
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    // The first run pulls the image (about 500 MB): give it two minutes.
    await waitFor(endpoint, child, `${DYNAMODB_LOCAL_IMAGE} (docker)`, 120_000);
  } catch (error) {
    await stop();
    throw new Error(noEmulatorMessage(`Docker did not start ${DYNAMODB_LOCAL_IMAGE} (${(error as Error).message})`));
  }
  return { endpoint, child, stop };
}

async function startS3(options: EmulatorOptions): Promise<{ endpoint: string; child?: ChildProcess }> {
  const external = process.env['S3_ENDPOINT'];
  if (external) return { endpoint: external };
  const port = await freePort();
  const directory = resolve(options.dataDir, 's3');
  mkdirSync(directory, { recursive: true });
  // s3rver with SigV4 checked (lib/local/s3-server.ts), not its own CLI, which checks no V4 signature.
  const server = join(dirname(fileURLToPath(import.meta.url)), 's3-server.ts');
  const args = [
    '--openssl-legacy-provider',
    '--import',
    'tsx',
    server,
    '--directory',
    directory,
    '--port',
    String(port),
  ];
  for (const bucket of options.buckets) args.push('--bucket', bucket);
  const child = spawnOwned(process.execPath, args);
  const endpoint = `http://127.0.0.1:${port}`;
  // Its TypeScript is compiled as it starts (tsx): on a busy machine that takes more than a few seconds.
  await waitFor(endpoint, child, 's3rver', 60_000);
  return { endpoint, child };
}

/** Creates every table of the definitions that does not exist yet, with TTL, under `prefix`. */
export async function ensureTables(endpoint: string, prefix: string): Promise<Record<string, string>> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  const names: Record<string, string> = {};
  await Promise.all(
    tables.map(async (def) => {
      const tableName = `${prefix}${def.id.toLowerCase()}`;
      names[def.envVar] = tableName;
      try {
        const existing = await client.send(new DescribeTableCommand({ TableName: tableName }));
        // A table kept under .data from before its definition had a stream gets one now.
        if (def.stream && !existing.Table?.StreamSpecification?.StreamEnabled) {
          await client.send(
            new UpdateTableCommand({
              TableName: tableName,
              StreamSpecification: { StreamEnabled: true, StreamViewType: def.stream },
            }),
          );
        }
        // A table kept under .data from before an index was defined gets it now (older items join it as they change).
        const present = new Set((existing.Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
        const wanted = createTableInput(def, tableName);
        for (const index of wanted.GlobalSecondaryIndexes ?? []) {
          if (present.has(index.IndexName)) continue;
          await client.send(
            new UpdateTableCommand({
              TableName: tableName,
              AttributeDefinitions: wanted.AttributeDefinitions,
              GlobalSecondaryIndexUpdates: [{ Create: index }],
            }),
          );
        }
        return;
      } catch (error) {
        if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
      }
      await client.send(new CreateTableCommand(createTableInput(def, tableName))).catch((error: unknown) => {
        if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
      });
      if (def.ttlAttribute) {
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName: tableName,
            TimeToLiveSpecification: { AttributeName: def.ttlAttribute, Enabled: true },
          }),
        );
      }
    }),
  );
  client.destroy();
  return names;
}

/** s3rver knows one key pair, S3RVER/S3RVER (lib/local/s3-signatures.ts); dynoxide takes any. */
export { LOCAL_CREDENTIALS };
