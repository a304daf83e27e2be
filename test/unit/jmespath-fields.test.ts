/**
 * Issue 25.7: the deployed bundles replace Powertools' JMESPath engine with shared/http/jmespath-fields.ts (an esbuild
 * alias in BUNDLING). The stand-in answers a field name as the engine does and refuses anything else; idempotency
 * bundled that way still replays a repeat and refuses the same key with another payload.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { search as engineSearch } from '@aws-lambda-powertools/jmespath';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { BUNDLING, JMESPATH_ALIASES } from '../../lib/constructs/dispatch-function.ts';
import { ROOT } from '../../lib/paths.ts';
import { search } from '../../shared/http/jmespath-fields.ts';

const RECORDS: unknown[] = [
  { key: 'scope#k1', payload: 'abc' },
  { key: '', payload: '' },
  { key: null, payload: 0 },
  { key: undefined },
  { payload: { nested: [1, 2] } },
  { other: 1 },
  {},
  [],
  ['key'],
  'key',
  42,
  null,
  undefined,
];

/** The JMESPath expressions shared/http/idempotency.ts configures. */
const configuredPaths = () =>
  [...readFileSync(join(ROOT, 'shared/http/idempotency.ts'), 'utf8').matchAll(/JmesPath:\s*'([^']*)'/g)].map(
    (m) => m[1]!,
  );

describe('jmespath-fields, the bundles’ stand-in for the JMESPath engine', () => {
  it('answers every field name idempotency uses as the engine does, on every kind of record', () => {
    const paths = configuredPaths();
    expect(paths).toEqual(['key', 'payload']);
    for (const path of [...paths, 'missing', '_x1']) {
      for (const record of RECORDS) {
        expect(search(path, record), `${path} of ${JSON.stringify(record)}`).toEqual(
          engineSearch(path, record as never),
        );
      }
    }
  });

  it('refuses any expression that is not a field name rather than answering it wrongly', () => {
    for (const expression of ['a.b', 'a[0]', 'powertools_json(body)', '"key"', '', 'key || payload', '*']) {
      expect(() => search(expression, { key: 1 }), expression).toThrow(/not a field name/);
    }
  });

  it('is what every function bundle gets in place of the engine, and idempotency works through it', async () => {
    expect(BUNDLING!.esbuildArgs?.['--alias']).toEqual([
      expect.stringMatching(/^@aws-lambda-powertools\/jmespath\/functions=.*\/shared\/http\/jmespath-fields\.ts$/),
      expect.stringMatching(/^@aws-lambda-powertools\/jmespath=.*\/shared\/http\/jmespath-fields\.ts$/),
    ]);
    const alias = Object.fromEntries(JMESPATH_ALIASES.map((pair) => pair.split('=') as [string, string]));
    const outfile = join(mkdtempSync(join(tmpdir(), 'jmespath-fields-')), 'entry.mjs');
    const result = await build({
      stdin: {
        resolveDir: ROOT,
        loader: 'ts',
        contents: `
          import { IdempotencyConfig, IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError, IdempotencyValidationError, makeIdempotent } from '@aws-lambda-powertools/idempotency';
          import { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
          class MemoryStore extends BasePersistenceLayer {
            records = new Map();
            async _getRecord(key) { const r = this.records.get(key); if (!r) throw new IdempotencyItemNotFoundError(); return r; }
            async _putRecord(record) {
              const held = this.records.get(record.idempotencyKey);
              if (held && !held.isExpired()) throw new IdempotencyItemAlreadyExistsError('held', held);
              this.records.set(record.idempotencyKey, record);
            }
            async _updateRecord(record) { this.records.set(record.idempotencyKey, record); }
            async _deleteRecord(record) { this.records.delete(record.idempotencyKey); }
          }
          export async function run() {
            let runs = 0;
            const config = new IdempotencyConfig({ eventKeyJmesPath: 'key', payloadValidationJmesPath: 'payload', expiresAfterSeconds: 60, throwOnNoIdempotencyKey: true });
            config.registerLambdaContext({ getRemainingTimeInMillis: () => 10000 });
            const once = makeIdempotent(async (record) => ({ run: ++runs, payload: record.payload }), { persistenceStore: new MemoryStore(), config });
            const first = await once({ key: 'k1', payload: 'p1' });
            const repeat = await once({ key: 'k1', payload: 'p1' });
            const other = await once({ key: 'k2', payload: 'p1' });
            const conflict = await once({ key: 'k1', payload: 'p2' }).then(() => 'ran', (e) => e instanceof IdempotencyValidationError ? 'refused' : String(e));
            return { first, repeat, other, conflict, runs };
          }`,
      },
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: BUNDLING!.target,
      mainFields: BUNDLING!.mainFields,
      alias,
      metafile: true,
      logLevel: 'error',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.includes('jmespath/lib'))).toEqual([]);
    expect(inputs).toContain('shared/http/jmespath-fields.ts');
    const { run } = await import(outfile);
    expect(await run()).toEqual({
      first: { run: 1, payload: 'p1' },
      repeat: { run: 1, payload: 'p1' },
      other: { run: 2, payload: 'p1' },
      conflict: 'refused',
      runs: 2,
    });
  });
});
