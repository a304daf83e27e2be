/**
 * Every bound the OpenAPI document states on a request is one the validation enforces: for each string with a
 * `maxLength` and each integer with a `maximum` (body members at any depth, query parameters), a value one past the
 * bound is a 400 `validation_failed` naming that very field.
 */
import type * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi.ts';
import { validate } from '../../shared/http/validate.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  maxLength?: number;
  maximum?: number;
};

interface Bound {
  /** Contract-style path: `user.email`, `runsheets[0].tasks[0].id`. */
  path: string;
  /** The input that holds the one offending value at `path`. */
  value: unknown;
}

/** Sets `value` at `path` (dotted, `[0]` for the first array element) in a fresh object. */
function placed(path: string, value: unknown): unknown {
  const steps = path.match(/[^.[\]]+|\[0\]/g) ?? [];
  const root: Record<string, unknown> = {};
  let node: Record<string, unknown> | unknown[] = root;
  steps.forEach((step, i) => {
    const last = i === steps.length - 1;
    const next = steps[i + 1];
    const child = last ? value : next === '[0]' ? [] : {};
    if (step === '[0]') (node as unknown[])[0] = child;
    else (node as Record<string, unknown>)[step] = child;
    node = child as Record<string, unknown>;
  });
  return root;
}

/** Every bounded string and integer under `schema`, one past its bound. */
function boundsOf(schema: Schema, path: string): Bound[] {
  const branches = schema.anyOf ?? [schema];
  return branches.flatMap((branch): Bound[] => {
    if (branch.properties) {
      return Object.entries(branch.properties).flatMap(([key, child]) =>
        boundsOf(child, path ? `${path}.${key}` : key),
      );
    }
    if (branch.items) return boundsOf(branch.items, `${path}[0]`);
    if (branch.type === 'string' && branch.maxLength !== undefined) {
      return [{ path, value: 'a'.repeat(branch.maxLength + 1) }];
    }
    if (branch.type === 'integer' && branch.maximum !== undefined) return [{ path, value: branch.maximum + 1 }];
    return [];
  });
}

const document = openApiDocument() as unknown as {
  paths: Record<
    string,
    Record<
      string,
      {
        'x-spec-id': string;
        operationId: string;
        requestBody?: { content: Record<string, { schema: Schema }> };
        parameters?: { name: string; in: string; schema: Schema }[];
      }
    >
  >;
};

function refusedAt(schema: v.GenericSchema, input: unknown, prefix: '' | 'query'): string[] {
  try {
    validate(schema as Parameters<typeof validate>[0], input, prefix);
    return [];
  } catch (error) {
    return ((error as { errors?: { path: string }[] }).errors ?? []).map((e) => e.path);
  }
}

describe('the request bounds of the OpenAPI document', () => {
  it('are enforced: one past any maxLength or maximum is a 400 naming the field', () => {
    const unenforced: string[] = [];
    let checked = 0;
    for (const route of routes as readonly RouteDef[]) {
      const operation = document.paths[route.path]![route.method.toLowerCase()]!;
      const body = operation.requestBody?.content['application/json']?.schema;
      if (body && route.request?.body) {
        for (const bound of boundsOf(body, '')) {
          checked++;
          const paths = refusedAt(route.request.body, placed(bound.path, bound.value), '');
          if (!paths.includes(bound.path)) unenforced.push(`${route.id} body ${bound.path} → ${paths.join(', ')}`);
        }
      }
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'query' || !route.request?.query) continue;
        for (const bound of boundsOf(parameter.schema, parameter.name)) {
          if (bound.path !== parameter.name || typeof bound.value !== 'string') continue;
          checked++;
          const paths = refusedAt(route.request.query, { [parameter.name]: bound.value }, 'query');
          if (!paths.includes(`query.${parameter.name}`)) {
            unenforced.push(`${route.id} query ${parameter.name} → ${paths.join(', ')}`);
          }
        }
      }
    }
    expect(unenforced).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });
});

describe('P5’s task_ids over the whole call (contract 4.9, issue 33 item 3)', () => {
  const P5 = (routes as readonly RouteDef[]).find((route) => route.id === 'P5')!.request!.body!;
  const id = (n: number) => n.toString(16).padStart(24, '0');
  /** One runsheet per entry of `sizes`, each naming that many distinct task ids. */
  const body = (sizes: number[]) => ({
    runsheets: sizes.map((size, i) => ({
      id: `RS-${i}`,
      task_ids: Array.from({ length: size }, (_, j) => id(i * 1000 + j)),
    })),
  });

  it('takes 1 000 ids in all, and refuses the 1 001st at the task_ids of the runsheet that brings it', () => {
    expect(refusedAt(P5, body([200, 200, 200, 200, 200]), '')).toEqual([]);
    expect(refusedAt(P5, body([1, 200, 200, 200, 200, 199]), '')).toEqual([]);
    expect(refusedAt(P5, body([200, 200, 200, 200, 200, 1]), '')).toEqual(['runsheets[5].task_ids']);
    expect(refusedAt(P5, body([0, 200, 200, 200, 200, 199, 2, 200]), '')).toEqual(['runsheets[6].task_ids']);
  });

  it('refuses the issue’s probe (90 runsheets × 200 ids) at the sixth runsheet, and 91 runsheets at runsheets', () => {
    expect(refusedAt(P5, body(Array(90).fill(200)), '')).toEqual(['runsheets[5].task_ids']);
    expect(refusedAt(P5, body(Array(91).fill(1)), '')).toEqual(['runsheets']);
    expect(refusedAt(P5, body([201]), '')).toEqual(['runsheets[0].task_ids']);
  });
});
