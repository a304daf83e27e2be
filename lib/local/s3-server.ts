/**
 * The test runner's shared S3 stand-in, run as a child process by lib/local/emulators.ts: s3rver with signatures
 * checked as S3 checks them (lib/local/s3.ts), raising no upload trigger (each test host runs its own S3 for that).
 * Arguments: --directory <dir> --port <n> --bucket <name>...
 */
import { parseArgs } from 'node:util';
import { startLocalS3 } from '#lib/local/s3';

const { values } = parseArgs({
  options: {
    directory: { type: 'string' },
    port: { type: 'string' },
    bucket: { type: 'string', multiple: true },
  },
});
if (!values.directory || !values.port) throw new Error('usage: s3-server --directory <dir> --port <n> --bucket <name>');
await startLocalS3(values.directory, values.bucket ?? [], Number(values.port), { trigger: false });
