/**
 * `npm run demo`: a day of dispatch against a running local host (start one with `npm start` first). Set
 * DISPATCH_URL for another host; DISPATCH_ADMIN_EMAIL / DISPATCH_ADMIN_PASSWORD if you changed the seeded admin.
 * It prints the live operations page (`/ops`) and the planner to sign in as; DEMO_WATCH_S=30 waits that long for
 * you to sign in there before the drivers start moving.
 */
import { runDemo } from '#lib/demo';

const url = process.env['DISPATCH_URL'] ?? `http://localhost:${process.env['PORT'] ?? 3000}`;
const health = await fetch(`${url}/health`).catch(() => undefined);
if (!health?.ok) {
  console.error(
    `dispatch demo: no service answers at ${url}/health. Start one with \`npm start\`, or say where it runs: PORT=<port> (as given to npm start) or DISPATCH_URL=<url>.`,
  );
  process.exit(1);
}
console.log(`A day of dispatch at ${url}; watch it live at ${url}/ops`);
console.log('Each step shows the operations behind it (spec id, method, path); Ctrl-C ends the day.\n');
// Ctrl-C ends the day where it is: no call is left running, the drivers stop moving, the socket closes.
const stop = new AbortController();
process.once('SIGINT', () => stop.abort(new Error('stopped by Ctrl-C')));
const summary = await runDemo({
  url,
  adminEmail: process.env['DISPATCH_ADMIN_EMAIL'] || 'admin@dispatch.local',
  adminPassword: process.env['DISPATCH_ADMIN_PASSWORD'] || 'admin-password-change-me',
  log: (line) => console.log(line),
  watchMs: Number(process.env['DEMO_WATCH_S'] ?? 0) * 1000,
  signal: stop.signal,
}).catch((error: unknown) => {
  if (stop.signal.aborted) {
    console.log('\nStopped (Ctrl-C). What the day made so far stays on the host.');
    process.exit(130);
  }
  console.error(`\ndispatch demo failed: ${(error as Error).message}`);
  process.exit(1);
});
const closed = Object.entries(summary.outcomes.closed).map(([reason, n]) => `${n} ${reason}`);
console.log(
  `\nOffers: ${summary.outcomes.accepted} accepted, ${summary.outcomes.declined} declined by their driver, ` +
    `${closed.length ? closed.join(', ') : 'none'} closed by the system, ${summary.outcomes.open} open.`,
);
console.log(`Done. Organisation ${summary.organisationId}; see it at ${url}/docs with the SysAdmin token.`);
console.log(`Live operations: ${summary.ops.url} (sign in as ${summary.ops.email} / ${summary.ops.password}).`);
console.log('Read lib/demo.ts next: every step above is a few calls of the typed client (lib/client) there.');
