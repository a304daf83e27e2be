/**
 * `npm start`: the whole service on one port with embedded DynamoDB and S3 stand-ins. Data lives under .data/ and
 * survives a restart; `npm start -- --fresh` starts empty. Ctrl-C stops everything this process started. It listens on
 * 127.0.0.1 unless `HOST` says otherwise (docs/local-mode.md).
 */
import { defaultOptions, startLocal, UPLOAD_BUCKET } from '#lib/local/start';

const options = { ...defaultOptions(), fresh: process.argv.includes('--fresh') };
const started = Date.now();
const host = await startLocal(options).catch((error: unknown) => {
  console.error(`dispatch: could not start: ${(error as Error).message}`);
  process.exit(1);
});

const ws = host.url.replace(/^http/, 'ws');
console.log(`Dispatch service ready in ${Date.now() - started} ms at ${host.url}
  API reference  ${host.url}/docs  (OpenAPI: ${host.url}/openapi.json; guides in docs/)
  Live ops       ${host.url}/ops
  WebSocket      ${ws}/ws?token=<bearer token>
  S3 endpoint    ${host.s3Endpoint}  (bucket ${UPLOAD_BUCKET}; awscli: --endpoint-url ${host.s3Endpoint})
  Mail outbox    ${host.url}/_local/outbox  (push: ${host.url}/_local/push-outbox)
  SysAdmin       ${options.adminEmail} / ${options.adminPassword}
  Data           ${options.dataDir}${options.fresh ? ' (started fresh)' : ''}
  Listening on   ${host.address}:${host.port}${host.address === '127.0.0.1' ? ' (this machine only; HOST=0.0.0.0 for every interface)' : ''}
Press Ctrl-C to stop.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    host.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
