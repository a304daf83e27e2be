/**
 * X23's body validation against bodies of bad vehicles (issue 51.1): the schema alone (valibot, every entry judged:
 * linear since `forwardTo` replaced valibot's quadratic `forward`) and the service's entry (`validate`, which judges
 * the first 200 entries, as many as the bound, and names the first 100 problems). `tsx bench/validation.ts` runs it alone.
 */
import * as v from 'valibot';
import { Problem, problemBody } from '#shared/http/problems';
import { validate } from '#shared/http/validate';
import { createBuildBody } from '#shared/routing/schemas';

const SIZES = [5_000, 20_000, 40_000] as const;

const badBody = (vehicles: number) => ({
  task_ids: ['0'.repeat(24)],
  vehicles: Array.from({ length: vehicles }, () => ({})),
});

function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export function benchValidation(): void {
  console.log('\n## X23 body validation, bodies of `{}` vehicles (issue 51.1)');
  console.log('| vehicles | body bytes | schema alone ms | problems | validate() ms | answer bytes |');
  console.log('|---|---|---|---|---|---|');
  const perVehicle: number[] = [];
  for (const size of SIZES) {
    const body = badBody(size);
    let start = process.hrtime.bigint();
    const parsed = v.safeParse(createBuildBody, body, { abortPipeEarly: true });
    const schemaMs = msSince(start);
    start = process.hrtime.bigint();
    let answer = '';
    try {
      validate(createBuildBody, body, '');
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      answer = JSON.stringify(problemBody(error, 'bench'));
    }
    const validateMs = msSince(start);
    perVehicle.push(schemaMs / size);
    const bytes = Buffer.byteLength(JSON.stringify(body));
    console.log(
      `| ${size} | ${bytes} | ${schemaMs.toFixed(1)} | ${parsed.issues?.length ?? 0} | ${validateMs.toFixed(1)} | ${answer.length} |`,
    );
  }
  const ratio = perVehicle.at(-1)! / perVehicle[0]!;
  console.log(`schema alone, ms per vehicle at ${SIZES.at(-1)} / at ${SIZES[0]}: ${ratio.toFixed(2)} (1 is linear)`);
}

if (process.argv[1]?.endsWith('validation.ts')) benchValidation();
