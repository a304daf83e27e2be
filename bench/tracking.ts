/**
 * X29 under a flood of guessed tokens (issue 52, contract 4.11): every guess a 404, the same answer for a token never
 * made and one revoked (X28), no timing difference worth measuring between them, and no Scan. Through the bench host:
 * a planner imports `LINKS` tasks, makes a link for each (X27) and revokes them all (X28); then `LINKS` guessed tokens
 * and the `LINKS` revoked ones are asked for, interleaved, each from its own loopback address (so that the budget of
 * 60 a minute per address and per token refuses none). It prints the function's time and read units of each kind,
 * their ratio, and the DynamoDB operations X29 used. Run alone: `npx tsx bench/tracking.ts`.
 */
import './env.ts';
import { request } from 'node:http';
import { percentile } from './position-lag-stats.ts';
import { routingCsv } from './vrp/csv.ts';
import { routingSession } from './vrp/service.ts';

const LINKS = 120;

/** One X29 from `address`: its status and its body. */
function readTracking(base: string, token: string, address: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const path = `/v1/tracking/${encodeURIComponent(token)}`;
    const req = request(new URL(path, base), { localAddress: address }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function benchTracking(): Promise<void> {
  const { tallyObservers } = await import('#shared/db/capacity');
  const session = await routingSession('tracking');
  const start = Date.parse('2026-12-01T08:00:00Z');
  const rows = Array.from({ length: LINKS }, (_, i) => ({
    ref: `TRACK-${i}`,
    from: { latitude: 1.3, longitude: 103.8 + i * 0.001 },
    to: { latitude: 1.31, longitude: 103.8 + i * 0.001 },
    fromOpenMs: start,
    fromCloseMs: start + 3_600_000,
    toOpenMs: start,
    toCloseMs: start + 7_200_000,
    fromServiceS: 60,
    toServiceS: 60,
  }));
  const { tasks } = await session.importTasks(routingCsv(rows));
  const revoked: string[] = [];
  for (const task of tasks) {
    const made = await session.must<{ tracking: { url: string } }>('POST', `/v1/tasks/${task.id}/tracking`, {});
    revoked.push(made.tracking.url.split('/').pop()!);
    await session.must('DELETE', `/v1/tasks/${task.id}/tracking`);
  }
  const guessed = Array.from({ length: LINKS }, (_, i) =>
    Buffer.from(`guess-${i}-${Math.random()}`).toString('base64url').padEnd(43, 'x').slice(0, 43),
  );

  const seen: { ms: number; rcu: number; calls: number }[] = [];
  const observe = (tally: { rcu: number; calls: number }, label: string, _status?: number, ms?: number) => {
    if (label === 'X29') seen.push({ ms: ms ?? 0, rcu: tally.rcu, calls: tally.calls });
  };
  tallyObservers.add(observe);
  const kinds = {
    unknown: [] as { ms: number; rcu: number; calls: number }[],
    revoked: [] as { ms: number; rcu: number; calls: number }[],
  };
  const bodies = new Set<string>();
  const statuses = new Map<number, number>();
  try {
    for (let i = 0; i < LINKS; i++) {
      for (const [kind, token] of [
        ['unknown', guessed[i]!],
        ['revoked', revoked[i]!],
      ] as const) {
        seen.length = 0;
        const address = `127.0.${1 + Math.floor(i / 100)}.${(i % 100) * 2 + (kind === 'unknown' ? 2 : 3)}`;
        const answer = await readTracking(session.base, token, address);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const { request_id: _id, ...rest } = JSON.parse(answer.body) as Record<string, unknown>;
        bodies.add(JSON.stringify(rest));
        if (seen[0]) kinds[kind].push(seen[0]);
      }
    }
  } finally {
    tallyObservers.delete(observe);
  }
  const line = (kind: keyof typeof kinds) => {
    const ms = kinds[kind].map((s) => s.ms).sort((a, b) => a - b);
    const count = Math.max(1, kinds[kind].length);
    const rcu = kinds[kind].reduce((sum, s) => sum + s.rcu, 0) / count;
    const calls = kinds[kind].reduce((sum, s) => sum + s.calls, 0) / count;
    return { p50: percentile(ms, 50), p95: percentile(ms, 95), rcu, calls };
  };
  const unknown = line('unknown');
  const gone = line('revoked');
  console.log(`\n## X29 under guessed tokens (${LINKS} never made, ${LINKS} revoked, interleaved)`);
  console.log(`statuses: ${[...statuses].map(([s, n]) => `${s} × ${n}`).join(', ')}; distinct bodies: ${bodies.size}`);
  console.log(`| token | function p50 ms | p95 ms | DynamoDB calls a request | RCU a request |`);
  console.log(`|---|---:|---:|---:|---:|`);
  console.log(
    `| never made | ${unknown.p50.toFixed(2)} | ${unknown.p95.toFixed(2)} | ${unknown.calls} | ${unknown.rcu} |`,
  );
  console.log(`| revoked | ${gone.p50.toFixed(2)} | ${gone.p95.toFixed(2)} | ${gone.calls} | ${gone.rcu} |`);
  console.log(
    `ratio revoked / never made: p50 ${(gone.p50 / unknown.p50).toFixed(2)}, p95 ${(gone.p95 / unknown.p95).toFixed(2)}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchTracking();
  const { stopBenchHost } = await import('./host.ts');
  await stopBenchHost();
}
