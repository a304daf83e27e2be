// `npm run smoke -- --url https://<api id>.execute-api.<region>.amazonaws.com [--email …] [--password …]`
import { parseArgs } from 'node:util';
import { runSmoke } from '#lib/smoke';

const { values } = parseArgs({
  options: { url: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' } },
});
if (!values.url) {
  console.error('usage: npm run smoke -- --url https://… [--email admin@…] [--password …]');
  process.exit(2);
}
const steps = await runSmoke({
  url: values.url,
  email: values.email ?? process.env['DISPATCH_ADMIN_EMAIL'] ?? 'admin@dispatch.local',
  password: values.password ?? process.env['DISPATCH_ADMIN_PASSWORD'] ?? 'admin-password-change-me',
});
process.exit(steps.every((step) => step.ok) ? 0 : 1);
