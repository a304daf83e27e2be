/**
 * A fault proxy in front of an emulator (dynoxide, s3rver): real sockets, real failures, switchable per test.
 * Modes: `pass`; `refuse` (nothing listens: ECONNREFUSED); `reset` (the answer starts, then the socket is destroyed
 * mid-response); `stall` (the request is read and never answered); `throttle` (DynamoDB's 400
 * ProvisionedThroughputExceededException, or S3's 503 SlowDown); `error` (DynamoDB's 500 InternalServerError, or S3's
 * 500 InternalError). `fraction` applies the fault to that share of requests and passes the rest; a list of modes
 * picks one of them for each faulty request. `random` (default Math.random) makes the decisions: pass a seeded
 * generator (`seededRandom`) for a reproducible sequence of decisions.
 */
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultMode = 'pass' | 'refuse' | 'reset' | 'stall' | 'throttle' | 'error';

export interface FaultProxy {
  url: string;
  /**
   * `only`: the fault applies only to these DynamoDB operations (`x-amz-target`, e.g. `BatchWriteItem`);
   * `passFirst`: that many of the requests it applies to pass before it starts (a fault in the middle of a run);
   * `times`: after that many faults, everything passes.
   */
  set(
    mode: FaultMode | FaultMode[],
    fraction?: number,
    only?: string[],
    passFirst?: number,
    times?: number,
  ): Promise<void>;
  counts: Record<FaultMode, number>;
  close(): Promise<void>;
}

const BODIES = {
  dynamodb: {
    throttle: {
      status: 400,
      type: 'application/x-amz-json-1.0',
      body: JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
        message: 'The level of configured provisioned throughput for the table was exceeded.',
      }),
    },
    error: {
      status: 500,
      type: 'application/x-amz-json-1.0',
      body: JSON.stringify({
        __type: 'com.amazon.coral.service#InternalServerError',
        message: 'Internal server error',
      }),
    },
  },
  s3: {
    throttle: {
      status: 503,
      type: 'application/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
    },
    error: {
      status: 500,
      type: 'application/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>',
    },
  },
};

export { seededRandom } from './random.ts';

export async function startFaultProxy(
  target: string,
  flavour: 'dynamodb' | 's3' = 'dynamodb',
  random: () => number = Math.random,
): Promise<FaultProxy> {
  const upstream = new URL(target);
  let modes: FaultMode[] = ['pass'];
  let fraction = 1;
  let only: string[] | undefined;
  let toPass = 0;
  let faultsLeft = Number.POSITIVE_INFINITY;
  const counts: Record<FaultMode, number> = { pass: 0, refuse: 0, reset: 0, stall: 0, throttle: 0, error: 0 };
  const stalled = new Set<ServerResponse>();

  const pass = (req: IncomingMessage, res: ServerResponse, resetMidway: boolean) => {
    const out = forward(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (resetMidway) {
          // Half the answer, then the socket goes.
          answer.once('data', (chunk: Buffer) => {
            res.write(chunk.subarray(0, Math.max(1, chunk.length >> 1)));
            res.socket?.destroy();
            answer.destroy();
          });
          // An answer without a body (HEAD, an empty 200): the headers went, then the socket goes.
          answer.once('end', () => res.socket?.destroy());
          answer.resume();
          return;
        }
        answer.pipe(res);
      },
    );
    out.on('error', () => res.socket?.destroy());
    req.pipe(out);
  };

  const server = createServer((req, res) => {
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const applies = modes[0] !== 'pass' && (!only || only.includes(operation)) && toPass-- <= 0;
    const faulty = applies && faultsLeft > 0 && random() < fraction;
    if (faulty) faultsLeft--;
    const current: FaultMode = faulty ? modes[Math.floor(random() * modes.length)]! : 'pass';
    counts[current]++;
    switch (current) {
      case 'stall':
        req.resume();
        stalled.add(res);
        res.on('close', () => stalled.delete(res));
        return;
      case 'throttle':
      case 'error': {
        req.resume();
        const answer = BODIES[flavour][current];
        res.writeHead(answer.status, { 'content-type': answer.type, 'x-amzn-requestid': 'fault-proxy' });
        res.end(answer.body);
        return;
      }
      case 'refuse':
        res.socket?.destroy();
        return;
      case 'reset':
        pass(req, res, true);
        return;
      default:
        pass(req, res, false);
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  let listening = true;

  const stop = () =>
    new Promise<void>((done) => {
      for (const res of stalled) res.socket?.destroy();
      server.closeAllConnections();
      server.close(() => done());
    });

  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    async set(next, share = 1, operations, passFirst = 0, times = Number.POSITIVE_INFINITY) {
      faultsLeft = times;
      modes = Array.isArray(next) ? next : [next];
      fraction = share;
      only = operations;
      toPass = passFirst;
      if (modes.length === 1 && modes[0] === 'refuse' && fraction >= 1) {
        if (listening) await stop();
        listening = false;
        counts.refuse++;
        return;
      }
      // Connections kept alive from before must not slip past the new mode.
      server.closeAllConnections();
      if (!listening) {
        await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
        listening = true;
      }
    },
    async close() {
      if (listening) await stop();
      listening = false;
    },
  };
}
