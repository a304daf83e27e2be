/**
 * A latency proxy in front of the DynamoDB emulator: every call waits a time drawn uniformly from a range before it is
 * forwarded, as a call to cloud DynamoDB takes a few milliseconds where the in-memory emulator answers at once. The
 * emulator's speed hides races between the API and the workers (a request's read and its conditional write fall
 * between two of a worker's calls only when calls take time): under this proxy they show up as they would in the
 * cloud. Everything that talks to the endpoint is delayed alike: the API's handlers and the workers of every test
 * process. Set by `DYNAMODB_LATENCY_MS` (`2-20`: 2 to 20 ms; `10`: 10 ms each call), read by global-setup.ts;
 * docs/testing.md says how to run a file under it.
 */
import { createServer, request as forward } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LatencyRange {
  min: number;
  max: number;
}

/** `2-20` or `10` (milliseconds); undefined when unset or empty; throws on anything else. */
export function parseLatency(value: string | undefined): LatencyRange | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?)\s*)?$/.exec(value);
  if (!match) throw new Error(`DYNAMODB_LATENCY_MS must be like 2-20 or 10 (milliseconds), not ${value}`);
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  if (max < min) throw new Error(`DYNAMODB_LATENCY_MS ${value}: the upper bound is below the lower`);
  return { min, max };
}

export interface LatencyProxy {
  url: string;
  /** Calls forwarded so far. */
  readonly calls: number;
  close(): Promise<void>;
}

export async function startLatencyProxy(
  target: string,
  range: LatencyRange,
  random: () => number = Math.random,
): Promise<LatencyProxy> {
  const upstream = new URL(target);
  let calls = 0;
  const server = createServer((req, res) => {
    calls++;
    const delay = range.min + random() * (range.max - range.min);
    // Forwarded at once, so the body streams in while the call waits; the request is written after the delay.
    req.pause();
    setTimeout(() => {
      const out = forward(
        { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.socket?.destroy());
      req.pipe(out);
      req.resume();
    }, delay);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get calls() {
      return calls;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
