/**
 * Issue 24 item 2: the document teaches a client that has nothing else: what each operation does, the CSV format of
 * the import operations, and every error status each operation can answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi.ts';
import { docsOf, OPERATION_DOCS } from '../../lib/openapi-docs/index.ts';
import { KNOWN_COLUMNS } from '../../shared/imports/csv-rows.ts';
import type { RouteDef } from '../../shared/routes/types.ts';
import { routes } from '../../shared/routes.ts';

type Operation = { description: string; responses: Record<string, unknown>; requestBody?: unknown };
const document = openApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> };
const ALL = routes as readonly RouteDef[];
const operation = (id: string) => {
  const route = ALL.find((r) => r.id === id)!;
  return document.paths[route.path]![route.method.toLowerCase()]!;
};

describe('the operations’ descriptions', () => {
  it('say what the operation does, not only its spec number and access', () => {
    for (const route of ALL) {
      const { description } = operation(route.id);
      expect(description, route.id).not.toMatch(/^Spec /);
      expect(description, route.id).toContain('Access: ');
    }
  });

  it('name every CSV column the importer knows in each import operation (I1, I3, I4a, I4b, I6)', () => {
    const columns = [...KNOWN_COLUMNS.tasks, ...KNOWN_COLUMNS.items];
    for (const id of ['I1', 'I1.ops', 'I3', 'I3.ops', 'I4a', 'I4b', 'I6', 'I6.ops']) {
      const { description } = operation(id);
      for (const column of columns) expect(description, `${id} ${column}`).toMatch(new RegExp(`\\b${column}\\b`));
    }
  });

  it('document I3’s multipart body', () => {
    expect(operation('I3').requestBody).toMatchObject({
      content: { 'multipart/form-data': { schema: { required: ['files'] } } },
    });
  });
});

describe('the error statuses', () => {
  it('410 on every operation that answers it (used, replaced or expired one-time tokens and codes)', () => {
    for (const id of ['A4', 'A11', 'X5', 'X8']) expect(Object.keys(operation(id).responses), id).toContain('410');
  });

  it('413 and 415 on every operation with a body, and on I3', () => {
    for (const route of ALL.filter((r) => r.request?.body || docsOf(r.id)?.multipart)) {
      expect(Object.keys(operation(route.id).responses), route.id).toEqual(expect.arrayContaining(['413', '415']));
    }
  });
});

type Schema = { description?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };
type Parameter = { name: string; in: string; description?: string };

/** Every member of `schema` (nested objects, array items, nullable branches) that has no description, by path. */
function undescribed(schema: Schema, path: string, described = false): string[] {
  const own = described || Boolean(schema.description);
  const missing = own ? [] : [path];
  const branches = schema.anyOf ?? [];
  const members = [schema, ...branches].flatMap((node) => [
    ...Object.entries(node.properties ?? {}).map(([name, member]) => undescribed(member, `${path}/${name}`)),
    ...(node.items ? [undescribed(node.items, `${path}/*`, true)] : []),
  ]);
  return [...(path === 'body' ? [] : missing), ...members.flat()];
}

/** The source files under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the docs map (lib/openapi-docs)', () => {
  it('describes every route: a new route must add its docs', () => {
    expect(ALL.filter((r) => !docsOf(r.id)?.description).map((r) => r.id)).toEqual([]);
  });

  it('names only routes that exist, and only request fields the route has', () => {
    const ids = new Set(ALL.map((r) => r.id));
    expect(Object.keys(OPERATION_DOCS).filter((id) => !ids.has(id))).toEqual([]);
    for (const route of ALL) {
      const op = operation(route.id) as Operation & { parameters: Parameter[] };
      const where = { path: 'params', query: 'query', header: 'headers' } as Record<string, string>;
      const known = new Set(op.parameters.map((p) => `${where[p.in]}/${p.name}`));
      const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.[
        'application/json'
      ]?.schema;
      const walk = (schema: Schema, path: string) => {
        known.add(path);
        for (const node of [schema, ...(schema.anyOf ?? [])]) {
          for (const [name, member] of Object.entries(node.properties ?? {})) walk(member, `${path}/${name}`);
          if (node.items) walk(node.items, `${path}/*`);
        }
      };
      if (body) walk(body, 'body');
      const stale = Object.keys(docsOf(route.id)?.fields ?? {}).filter((key) => !known.has(key));
      expect(stale, route.id).toEqual([]);
    }
  });

  it('describes every request field: each parameter and each body member, nested ones too', () => {
    const missing: string[] = [];
    for (const route of ALL) {
      const op = operation(route.id) as Operation & { parameters: Parameter[] };
      for (const p of op.parameters) if (!p.description) missing.push(`${route.id} ${p.in} ${p.name}`);
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content ?? {};
      for (const [type, { schema }] of Object.entries(content)) {
        if (type === 'application/json') missing.push(...undescribed(schema, 'body').map((p) => `${route.id} ${p}`));
      }
    }
    expect(missing).toEqual([]);
  });

  it('stays out of every Lambda bundle: nothing under shared/ or functions/ imports it', () => {
    const importers = [...sources('shared'), ...sources('functions')].filter((file) =>
      /openapi-docs/.test(readFileSync(file, 'utf8')),
    );
    expect(importers).toEqual([]);
  });
});
