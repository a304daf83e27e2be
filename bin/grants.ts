// `npm run grants`: rewrites docs/grants.md from the declared needs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { grantsMarkdown } from '#lib/grants-doc';
import { ROOT } from '#lib/paths';

writeFileSync(join(ROOT, 'docs', 'grants.md'), grantsMarkdown());
