/**
 * The OpenAPI document passes Redocly's recommended lint rules (the linter behind `redocly lint`), with every
 * operation described: request schemas where it takes input, a success schema, and problem+json failures.
 */
import { readFileSync } from 'node:fs';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';

const document = openApiDocument();

describe('the OpenAPI document', () => {
  it('passes the recommended rules of the Redocly linter with no error and no warning', async () => {
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: 'openapi.json',
      config: await createConfig({
        extends: ['recommended-strict'],
        rules: {
          // The contract fixes `/v1/admin/users/by-email/{email}` beside `/v1/admin/users/{userID}/confirm`; API
          // Gateway (and the local host) match the literal `by-email` segment first, so neither call is ambiguous.
          'no-ambiguous-paths': 'off',
        },
      }),
    });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('describes every operation’s input and every success reply with a schema', () => {
    const bare: string[] = [];
    for (const route of routes as readonly RouteDef[]) {
      const op = (document.paths[route.path] as Record<string, Record<string, unknown>>)[route.method.toLowerCase()]!;
      const responses = op['responses'] as Record<string, { content?: Record<string, { schema: object }> }>;
      const success = responses[String(route.status)]!;
      const schema = Object.values(success.content ?? {})[0]?.schema as { type?: string; properties?: object };
      if (!schema || (schema.type === 'object' && !schema.properties)) bare.push(`${route.id} reply`);
      if (route.request?.body && !op['requestBody']) bare.push(`${route.id} body`);
      if (!responses['default']) bare.push(`${route.id} failures`);
    }
    expect(bare).toEqual([]);
  });
});

describe('the typed client', () => {
  it('is generated from the current document (run `npm run client` after changing a route)', async () => {
    const { generatedSchema, SCHEMA_FILE } = await import('../../bin/generate-client.ts');
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(await generatedSchema());
  });

  it('has its event types generated from the events the service publishes (run `npm run client`)', async () => {
    const { generatedEvents, EVENTS_FILE } = await import('../../bin/generate-client.ts');
    expect(readFileSync(EVENTS_FILE, 'utf8')).toBe(await generatedEvents());
  });
});
