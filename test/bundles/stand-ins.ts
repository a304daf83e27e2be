/**
 * Stand-ins for the AWS services the bundles call that have no emulator here: Secrets Manager, KMS, SQS, SES v2 and
 * the WebSocket management API, on one local port that `AWS_ENDPOINT_URL_*` points the SDK at. Each answers the
 * way the service's protocol does (enough for the SDK to accept it) and records the call.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandIns {
  url: string;
  calls: string[];
  stop(): Promise<void>;
}

export async function startStandIns(secrets: Record<string, string>): Promise<StandIns> {
  const calls: string[] = [];
  const store = new Map(Object.entries(secrets));
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = raw?.startsWith('{') ? (JSON.parse(raw) as Record<string, string>) : {};
      const target = String(request.headers['x-amz-target'] ?? '');
      const json = (status: number, value: unknown, type = 'application/x-amz-json-1.1') => {
        response.writeHead(status, { 'content-type': type });
        response.end(JSON.stringify(value));
      };
      const path = request.url ?? '/';
      calls.push(target || `${request.method} ${path}`);
      switch (target) {
        case 'secretsmanager.GetSecretValue': {
          const value = store.get(body['SecretId']!);
          if (value === undefined) return json(400, { __type: 'ResourceNotFoundException', message: 'no secret' });
          return json(200, { ARN: body['SecretId'], Name: body['SecretId'], SecretString: value, VersionId: 'v1' });
        }
        case 'secretsmanager.PutSecretValue':
          store.set(body['SecretId']!, body['SecretString']!);
          return json(200, { ARN: body['SecretId'], Name: body['SecretId'], VersionId: body['ClientRequestToken'] });
        case 'TrentService.Encrypt':
          return json(200, {
            KeyId: body['KeyId'],
            CiphertextBlob: Buffer.concat([Buffer.from('sealed:'), Buffer.from(body['Plaintext']!, 'base64')]).toString(
              'base64',
            ),
          });
        case 'TrentService.Decrypt':
          return json(200, {
            KeyId: body['KeyId'],
            Plaintext: Buffer.from(body['CiphertextBlob']!, 'base64').subarray(7).toString('base64'),
          });
        case 'AmazonSQS.SendMessage':
          return json(
            200,
            {
              MessageId: randomBytes(8).toString('hex'),
              MD5OfMessageBody: createHash('md5')
                .update(body['MessageBody'] ?? '')
                .digest('hex'),
            },
            'application/x-amz-json-1.0',
          );
      }
      if (path.startsWith('/v2/email/outbound-emails')) return json(200, { MessageId: 'stand-in' }, 'application/json');
      if (path.includes('/@connections/')) {
        response.writeHead(request.method === 'POST' ? 200 : 204);
        return response.end();
      }
      json(400, { __type: 'UnknownOperationException', message: `stand-in does not know ${target || path}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
