/**
 * Where no dynoxide binary fits the platform (a Mac, Linux arm64: issue 36 item 8), `npm start` and `npm test` run
 * AWS's DynamoDB Local image with Docker while they run and stop it after; without Docker they say in one message
 * exactly what to run. Docker here is a stand-in executable on the PATH: it records its arguments and serves `run`
 * with this machine's dynoxide on the published port, so the service's real DynamoDB calls go through it.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureTables, LOCAL_CREDENTIALS, startEmulators } from '../../lib/local/emulators.ts';

const require = createRequire(import.meta.url);
const dynoxide = join(dirname(require.resolve('@dynoxide/linux-x64/package.json')), 'dynoxide');

/** A folder holding a `docker` that logs each call to `docker.log` and, for `run`, execs dynoxide on the port. */
function standInDocker(daemonUp: boolean): { dir: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), 'docker-'));
  const log = join(dir, 'docker.log');
  const script = `#!/bin/sh
echo "$@" >> ${JSON.stringify(log)}
if [ ${daemonUp ? 1 : 0} = 0 ]; then
  echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
  exit 1
fi
cmd="$1"; shift
case "$cmd" in
  run)
    name=""; port=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --name) name="$2"; shift ;;
        -p) port=$(echo "$2" | cut -d: -f2); shift ;;
      esac
      shift
    done
    echo $$ > ${JSON.stringify(dir)}/"$name".pid
    exec ${JSON.stringify(dynoxide)} serve --host 127.0.0.1 --port "$port"
    ;;
  stop|rm)
    for last; do true; done
    pidfile=${JSON.stringify(dir)}/"$last".pid
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null && rm -f "$pidfile"
    exit 0
    ;;
esac
`;
  writeFileSync(join(dir, 'docker'), script);
  chmodSync(join(dir, 'docker'), 0o755);
  return { dir, log };
}

const saved = { ...process.env };
beforeEach(() => {
  delete process.env['DYNAMODB_ENDPOINT'];
  process.env['DISPATCH_EMULATOR_PLATFORM'] = 'darwin-arm64';
});
afterEach(() => {
  for (const key of ['DYNAMODB_ENDPOINT', 'DISPATCH_EMULATOR_PLATFORM', 'PATH']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

const refused = (endpoint: string) =>
  fetch(endpoint, { signal: AbortSignal.timeout(2000) }).then(
    () => undefined,
    (failure: Error & { cause?: { code?: string } }) => failure.cause?.code,
  );

describe('the DynamoDB emulator where no dynoxide binary fits', () => {
  it('runs amazon/dynamodb-local with Docker for as long as the host runs, and stops it after', async () => {
    const docker = standInDocker(true);
    process.env['PATH'] = `${docker.dir}:${saved['PATH']}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'choice-'));
    const emulators = await startEmulators({ dataDir, persistent: false, buckets: [], s3: false });
    try {
      const [run] = readFileSync(docker.log, 'utf8').trim().split('\n');
      // Its own name, published on loopback only, AWS's image in memory, one database whatever the credentials.
      expect(run).toMatch(
        /^run --rm --name dispatch-dynamodb-\d+-\d+ -p 127\.0\.0\.1:\d+:8000 amazon\/dynamodb-local -jar DynamoDBLocal\.jar -sharedDb -inMemory$/,
      );
      expect(run).toContain(`127.0.0.1:${new URL(emulators.dynamodbEndpoint).port}:8000`);
      // The service's tables are made there, as on dynoxide.
      const names = await ensureTables(emulators.dynamodbEndpoint, 'choice-');
      const client = new DynamoDBClient({
        endpoint: emulators.dynamodbEndpoint,
        region: 'us-east-1',
        credentials: LOCAL_CREDENTIALS,
      });
      const listed = await client.send(new ListTablesCommand({}));
      client.destroy();
      expect(listed.TableNames).toEqual(expect.arrayContaining(Object.values(names)));
    } finally {
      await emulators.stop();
    }
    const calls = readFileSync(docker.log, 'utf8').trim().split('\n');
    const name = calls[0]!.split(' ')[3]!;
    expect(calls).toContain(`stop -t 2 ${name}`);
    expect(await refused(emulators.dynamodbEndpoint)).toBe('ECONNREFUSED');
    expect(existsSync(join(docker.dir, `${name}.pid`))).toBe(false);
  }, 60_000);

  it('keeps DynamoDB Local’s files under the data folder, as this user, when the host keeps its data', async () => {
    const docker = standInDocker(true);
    process.env['PATH'] = `${docker.dir}:${saved['PATH']}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'choice-'));
    const emulators = await startEmulators({ dataDir, persistent: true, buckets: [], s3: false });
    await emulators.stop();
    const [run] = readFileSync(docker.log, 'utf8').trim().split('\n');
    expect(run).toContain(`-u ${process.getuid!()}:${process.getgid!()}`);
    expect(run).toContain(`-v ${join(dataDir, 'dynamodb-local')}:/data amazon/dynamodb-local`);
    expect(run).toMatch(/-sharedDb -dbPath \/data$/);
    expect(existsSync(join(dataDir, 'dynamodb-local'))).toBe(true);
  }, 60_000);

  it('says exactly what to run when Docker is not on the PATH', async () => {
    process.env['PATH'] = mkdtempSync(join(tmpdir(), 'no-docker-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'choice-'));
    const failed = await startEmulators({ dataDir, persistent: false, buckets: [], s3: false }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failed).toContain('no DynamoDB emulator for darwin-arm64: Docker is not on the PATH');
    expect(failed).toContain('docker run --rm -p 8000:8000 amazon/dynamodb-local -jar DynamoDBLocal.jar');
    expect(failed).toContain('DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm start');
  });

  it('says so, with the same instructions, when Docker cannot start the image (its daemon is down)', async () => {
    const docker = standInDocker(false);
    process.env['PATH'] = `${docker.dir}:${saved['PATH']}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'choice-'));
    const failed = await startEmulators({ dataDir, persistent: false, buckets: [], s3: false }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failed).toContain('Docker did not start amazon/dynamodb-local');
    expect(failed).toContain('DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm start');
  }, 60_000);

  it('still runs dynoxide where its binary fits (Linux x64), without asking Docker', async () => {
    const docker = standInDocker(true);
    process.env['PATH'] = `${docker.dir}:${saved['PATH']}`;
    process.env['DISPATCH_EMULATOR_PLATFORM'] = 'linux-x64';
    const dataDir = mkdtempSync(join(tmpdir(), 'choice-'));
    const emulators = await startEmulators({ dataDir, persistent: false, buckets: [], s3: false });
    await emulators.stop();
    expect(existsSync(docker.log)).toBe(false);
  }, 60_000);
});
