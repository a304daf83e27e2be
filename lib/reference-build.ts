/**
 * The cloud's `/openapi.json` (issue 42 item 12) is the document this repository generates (lib/openapi.ts), written
 * at bundling time into the reference function's bundle: the function (functions/system/reference.ts) serves the
 * file with its own URL in place of `DOCUMENT_SERVER`, and imports nothing of lib/ (the house's floors run down).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openApiDocument } from '#lib/openapi';
import { ROOT } from '#lib/paths';
import { DOCUMENT_SERVER } from '#shared/reference/page';

/** Where the document is written, from the repository's root (copied into the bundle's docs-assets/). */
export const REFERENCE_DOCUMENT = 'node_modules/.cache/reference/openapi.json';

/** Writes the document (whole, then renamed) to `file`; answers its path. */
export function buildReferenceDocument(file = join(ROOT, REFERENCE_DOCUMENT)): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(openApiDocument(DOCUMENT_SERVER)));
  renameSync(`${file}.tmp`, file);
  return file;
}
