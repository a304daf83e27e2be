/**
 * What the deployed bundles use in place of `@aws-lambda-powertools/jmespath` (an esbuild alias in
 * lib/constructs/dispatch-function.ts). Powertools idempotency imports the full JMESPath engine (23 kB of every
 * bundle) to read two paths, and ours are plain field names: `key` and `payload` of the record
 * shared/http/idempotency.ts hands it. A field name is all this answers, as the engine answers it (the field's value
 * when the record has it, else null); any other expression throws, so that a new path cannot be judged wrongly in
 * silence. test/unit/jmespath-fields.test.ts holds it to the engine's answers.
 */

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `search(expression, data)` of the engine, for an expression that is one unquoted field name. */
export function search(expression: string, data: unknown): unknown {
  if (!FIELD.test(expression)) {
    throw new Error(`jmespath-fields: "${expression}" is not a field name (only field names are bundled)`);
  }
  if (Object.prototype.toString.call(data) !== '[object Object]') return null;
  const record = data as Record<string, unknown>;
  return expression in record ? record[expression] : null;
}

/**
 * Powertools' JMESPath functions (`powertools_json()` and the like), which a field name never calls. Idempotency
 * makes one per config and compares their constructors; nothing else reads it.
 */
export class PowertoolsFunctions {}
