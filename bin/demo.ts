/**
 * `npm run demo`: a day of dispatch against a running local host (start one with `npm start` first). Set
 * DISPATCH_URL for another host; DISPATCH_ADMIN_EMAIL / DISPATCH_ADMIN_PASSWORD if you changed the seeded admin.
 */
import { runDemo } from '#lib/demo';

const url = process.env['DISPATCH_URL'] ?? `http://localhost:${process.env['PORT'] ?? 3000}`;
const health = await fetch(`${url}/health`).catch(() => undefined);
if (!health?.ok) {
  console.error(
    `dispatch demo: no service answers at ${url}/health. Start one with \`npm start\` (or set DISPATCH_URL).`,
  );
  process.exit(1);
}
console.log(`A day of dispatch at ${url}\n`);
const summary = await runDemo({
  url,
  adminEmail: process.env['DISPATCH_ADMIN_EMAIL'] || 'admin@dispatch.local',
  adminPassword: process.env['DISPATCH_ADMIN_PASSWORD'] || 'admin-password-change-me',
  log: (line) => console.log(line),
}).catch((error: unknown) => {
  console.error(`\ndispatch demo failed: ${(error as Error).message}`);
  process.exit(1);
});
console.log(`\nDone. Organisation ${summary.organisationId}; see it at ${url}/docs with the SysAdmin token.`);
