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
  /** The secrets' versions and stages, as a rotation sees them (test/bundles/key-rotation.test.ts). */
  secrets: {
    /** What Secrets Manager does before it invokes a rotation function: a version `token` staged AWSPENDING. */
    startRotation(secretId: string, token: string): void;
    /**
     * What Secrets Manager does to check a new schedule that does not rotate at once (`RotateImmediatelyOnUpdate:
     * false`): a version `token` holding a copy of AWSCURRENT's value, staged AWSPENDING, for testSecret alone (moto
     * models the same: moto/secretsmanager/models.py, rotate_secret). `endConfigurationTest` takes the label off again.
     */
    startConfigurationTest(secretId: string, token: string): void;
    endConfigurationTest(secretId: string, token: string): void;
    current(secretId: string): string | undefined;
    /** Replaces the AWSCURRENT value in place (a test moving the stored timestamps back, as time would). */
    setCurrent(secretId: string, value: string): void;
    stagesOf(secretId: string): Record<string, string[]>;
  };
  stop(): Promise<void>;
}

interface SecretVersion {
  value: string | undefined;
  stages: string[];
}

export async function startStandIns(secrets: Record<string, string>): Promise<StandIns> {
  const calls: string[] = [];
  // Secrets Manager's model: versions by id, each with its staging labels; a label is on one version at a time.
  const store = new Map<string, Map<string, SecretVersion>>(
    Object.entries(secrets).map(([id, value]) => [id, new Map([['v1', { value, stages: ['AWSCURRENT'] }]])]),
  );
  const versionsOf = (id: string) => {
    if (!store.has(id)) store.set(id, new Map());
    return store.get(id)!;
  };
  const stage = (id: string, label: string, versionId: string) => {
    const versions = versionsOf(id);
    for (const [other, version] of versions) {
      if (other === versionId || !version.stages.includes(label)) continue;
      version.stages = version.stages.filter((name) => name !== label);
      if (label === 'AWSCURRENT') {
        for (const old of versions.values()) old.stages = old.stages.filter((name) => name !== 'AWSPREVIOUS');
        version.stages.push('AWSPREVIOUS');
      }
    }
    const target = versions.get(versionId)!;
    if (!target.stages.includes(label)) target.stages.push(label);
    // Once a rotation's version is current, Secrets Manager takes AWSPENDING off it.
    if (label === 'AWSCURRENT') target.stages = target.stages.filter((name) => name !== 'AWSPENDING');
  };
  const find = (id: string, versionId?: string, label = 'AWSCURRENT') => {
    const versions = store.get(id);
    if (!versions) return undefined;
    if (versionId) {
      const version = versions.get(versionId);
      return version?.stages.includes(label) ? ([versionId, version] as const) : undefined;
    }
    return [...versions].find(([, version]) => version.stages.includes(label));
  };
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
          const found = find(body['SecretId']!, body['VersionId'], body['VersionStage'] ?? 'AWSCURRENT');
          if (found?.[1].value === undefined) {
            return json(400, { __type: 'ResourceNotFoundException', message: 'no such secret value' });
          }
          const [versionId, version] = found;
          return json(200, {
            ARN: body['SecretId'],
            Name: body['SecretId'],
            SecretString: version.value,
            VersionId: versionId,
            VersionStages: version.stages,
          });
        }
        case 'secretsmanager.PutSecretValue': {
          const id = body['SecretId']!;
          const versionId = body['ClientRequestToken'] ?? randomBytes(16).toString('hex');
          const versions = versionsOf(id);
          const existing = versions.get(versionId);
          if (existing?.value !== undefined && existing.value !== body['SecretString']) {
            return json(400, { __type: 'ResourceExistsException', message: 'version exists with another value' });
          }
          if (existing) existing.value = body['SecretString']!;
          else versions.set(versionId, { value: body['SecretString']!, stages: [] });
          const labels = (body as unknown as { VersionStages?: string[] }).VersionStages ?? ['AWSCURRENT'];
          for (const label of labels) stage(id, label, versionId);
          return json(200, { ARN: id, Name: id, VersionId: versionId, VersionStages: labels });
        }
        case 'secretsmanager.DescribeSecret': {
          const versions = store.get(body['SecretId']!);
          if (!versions) return json(400, { __type: 'ResourceNotFoundException', message: 'no secret' });
          return json(200, {
            ARN: body['SecretId'],
            Name: body['SecretId'],
            RotationEnabled: true,
            VersionIdsToStages: Object.fromEntries([...versions].map(([versionId, v]) => [versionId, v.stages])),
          });
        }
        case 'secretsmanager.UpdateSecretVersionStage': {
          const id = body['SecretId']!;
          const label = body['VersionStage']!;
          const holder = find(id, undefined, label)?.[0];
          if (holder && holder !== body['RemoveFromVersionId'] && holder !== body['MoveToVersionId']) {
            return json(400, { __type: 'InvalidParameterException', message: `${label} is on ${holder}` });
          }
          if (!versionsOf(id).has(body['MoveToVersionId']!)) {
            return json(400, { __type: 'ResourceNotFoundException', message: 'no such version' });
          }
          stage(id, label, body['MoveToVersionId']!);
          return json(200, { ARN: id, Name: id });
        }
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
    secrets: {
      startRotation(secretId, token) {
        const versions = versionsOf(secretId);
        versions.set(token, { value: undefined, stages: [] });
        stage(secretId, 'AWSPENDING', token);
      },
      startConfigurationTest(secretId, token) {
        versionsOf(secretId).set(token, { value: find(secretId)?.[1].value, stages: [] });
        stage(secretId, 'AWSPENDING', token);
      },
      endConfigurationTest(secretId, token) {
        const version = versionsOf(secretId).get(token);
        if (version) version.stages = version.stages.filter((name) => name !== 'AWSPENDING');
      },
      current: (secretId) => find(secretId)?.[1].value,
      setCurrent(secretId, value) {
        find(secretId)![1].value = value;
      },
      stagesOf: (secretId) =>
        Object.fromEntries([...(store.get(secretId) ?? [])].map(([versionId, v]) => [versionId, v.stages])),
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
