// `npm run figures`: prints each stack's resources, functions and alarms from the synthesized templates and writes
// them into docs/deploy.md (test/infra/deploy-figures.test.ts keeps the page and the templates in step).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '#lib/deploy-aws';
import { figuresTable, stackFigures, withFigures } from '#lib/stack-figures';

const table = figuresTable(stackFigures());
console.log(table);
const page = join(REPO_ROOT, 'docs', 'deploy.md');
writeFileSync(page, withFigures(readFileSync(page, 'utf8'), table));
