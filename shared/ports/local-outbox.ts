/**
 * The local outboxes' store (`GET /_local/outbox`, `GET /_local/push-outbox`): newest last in memory, at most `limit`
 * entries. Under `npm start` (LOCAL_OUTBOX_DIR, in the data folder) each entry is also appended to a JSON-lines file
 * there, so that what was sent survives a restart as the rest of `.data/` does (contract section 5): an invitation
 * sent before a restart can still be accepted after it. `npm start -- --fresh` empties it with the folder.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function localOutboxStore<T>(name: string, limit = 10_000) {
  let loadedFrom: string | undefined;
  let entries: T[] = [];
  /** The entries of the file in use now (a host started with another data folder reads its own). */
  const current = () => {
    const dir = process.env['LOCAL_OUTBOX_DIR'] || undefined;
    const file = dir && join(dir, `${name}.jsonl`);
    if (file !== loadedFrom) {
      loadedFrom = file;
      entries = [];
      if (file) {
        let lines: string[] = [];
        try {
          lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
        } catch {
          // nothing sent yet
        }
        entries = lines.slice(-limit).map((line) => JSON.parse(line) as T);
        if (lines.length > 2 * limit) writeFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      }
    }
    return entries;
  };
  return {
    push(entry: T) {
      const list = current();
      list.push(entry);
      if (list.length > limit) list.shift();
      if (loadedFrom) {
        mkdirSync(join(loadedFrom, '..'), { recursive: true });
        appendFileSync(loadedFrom, `${JSON.stringify(entry)}\n`);
      }
    },
    /** Every entry, oldest first. */
    all: (): readonly T[] => current(),
  };
}
