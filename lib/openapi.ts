/**
 * The OpenAPI 3.1 document, generated from the route table and its valibot schemas: the same source the handlers
 * validate with, so the document cannot drift from the behaviour.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type { GenericSchema } from 'valibot';
import { COMMON_FIELDS, docsOf, type OperationDocs, perPageDescription } from '#lib/openapi-docs/index';
import { describeNeed } from '#shared/auth/access';
import { CHANNEL_EVENTS } from '#shared/notifications/events';
import { type RouteDef, routes } from '#shared/routes';

type JsonSchema = Record<string, unknown>;

const jsonSchema = (schema: GenericSchema): JsonSchema => {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema, { errorMode: 'ignore' }) as JsonSchema;
  return rest;
};

/**
 * A reply's schema, closed (contract section 1: a response carries the contract's members only): every `v.object`
 * becomes `additionalProperties: false`, so a member the schema does not name (a storage key, `entity`, a lease)
 * fails the conformance check of every response the tests receive. A reply part that is open by design is written
 * `v.looseObject` (or `v.record`) in the route table, with its reason beside it, and stays open. Request schemas
 * stay as they are: unknown body members are ignored (contract section 1), not refused.
 */
const replySchema = (schema: GenericSchema): JsonSchema => {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema, {
    errorMode: 'ignore',
    overrideSchema: ({ valibotSchema, jsonSchema: converted }) =>
      valibotSchema.type === 'object' ? { ...converted, additionalProperties: false } : undefined,
  }) as JsonSchema;
  return rest;
};

const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'code', 'detail', 'errors', 'request_id'],
  properties: {
    type: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    status: { type: 'integer' },
    code: { type: 'string' },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
        additionalProperties: false,
      },
    },
    errors_truncated: {
      type: 'boolean',
      const: true,
      description: 'present when `errors[]` holds the first 100 problems of more',
    },
    errors_count: {
      type: 'integer',
      minimum: 101,
      description: 'how many problems there were, when `errors[]` was cut',
    },
    request_id: { type: 'string' },
  },
  additionalProperties: false,
};

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/**
 * A request field's description (lib/openapi-docs): the operation's own, else the one many operations share; `per_page`
 * says the operation's own bounds. `key` is OperationDocs.fields' key (`query/per_page`, `body/user/email` …).
 */
function fieldDescription(docs: OperationDocs | undefined, key: string, owner?: GenericSchema, field?: JsonSchema) {
  const own = docs?.fields?.[key] ?? COMMON_FIELDS[key];
  if (own !== undefined) return own;
  if (key === 'query/per_page' && owner) return perPageDescription(owner, field?.['default']);
  return undefined;
}

/**
 * `schema` with every member's description from the docs (`prefix` is `body`): nested objects by member name, an
 * array's items as `*`, a nullable member's description on the member itself (not in its anyOf branch).
 */
function describedSchema(schema: JsonSchema, docs: OperationDocs | undefined, prefix: string): JsonSchema {
  const node: JsonSchema = { ...schema };
  const description = fieldDescription(docs, prefix);
  if (description !== undefined) node['description'] = description;
  const properties = node['properties'] as Record<string, JsonSchema> | undefined;
  if (properties) {
    node['properties'] = Object.fromEntries(
      Object.entries(properties).map(([name, member]) => [name, describedSchema(member, docs, `${prefix}/${name}`)]),
    );
  }
  const items = node['items'] as JsonSchema | undefined;
  if (items && !Array.isArray(items)) node['items'] = describedSchema(items, docs, `${prefix}/*`);
  for (const branch of ['anyOf', 'oneOf'] as const) {
    const branches = node[branch] as JsonSchema[] | undefined;
    if (!branches) continue;
    // The branches' members (an object or null) are described as the node's own members are.
    node[branch] = branches.map((b) => {
      const { description: _own, ...inner } = describedSchema(b, docs, prefix);
      return b['description'] === undefined ? inner : { ...inner, description: b['description'] };
    });
  }
  return node;
}

const PREFIX = { path: 'params', query: 'query', header: 'headers' } as const;

function parameters(
  schema: GenericSchema | undefined,
  location: 'path' | 'query' | 'header',
  docs: OperationDocs | undefined,
  examples: Readonly<Record<string, string>> = {},
) {
  if (!schema) return [];
  const object = jsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    // A parameter's description is the parameter's own (Swagger UI shows it next to the field).
    const { description: inSchema, ...rest } = property as { description?: string } & JsonSchema;
    const description = fieldDescription(docs, `${PREFIX[location]}/${name}`, schema, property) ?? inSchema;
    return {
      name,
      in: location,
      required: location === 'path' || (object.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
      ...(examples[name] !== undefined ? { example: examples[name] } : {}),
    };
  });
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
};

function successResponses(route: RouteDef): Record<string, unknown> {
  const documented = route.documented;
  if (documented?.bytes) {
    return {
      [String(route.status)]: {
        description: 'The file’s bytes, with its stored content type',
        content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
      },
      ...(documented.redirect
        ? {
            '302': {
              description: 'A large file: a short-lived presigned link in `Location`',
              headers: { Location: { schema: { type: 'string', format: 'uri' } } },
            },
          }
        : {}),
    };
  }
  const success = (description: string) => ({
    description,
    content: {
      'application/json': {
        schema: route.response ? replySchema(route.response) : { type: 'object', additionalProperties: false },
      },
    },
  });
  return {
    [String(route.status)]: success(STATUS_TEXT[route.status] ?? 'Success'),
    ...(route.repeatStatus
      ? { [String(route.repeatStatus)]: success('The same request again: recorded once, answered as it stands') }
      : {}),
  };
}

function errorResponses(route: RouteDef, docs: OperationDocs | undefined): Record<string, unknown> {
  const errors: Record<string, unknown> = { '400': problemResponse('Invalid request: `errors[]` names each field') };
  if (route.unauthenticated) errors['401'] = problemResponse(route.unauthenticated);
  if (route.access !== 'public') {
    // A bad token is the handler's problem+json; no Authorization header at all is API Gateway's own body.
    errors['401'] = {
      description:
        'Invalid bearer token (problem+json), or no Authorization header (API Gateway: {"message":"Unauthorized"}). ' +
        'A token of ours that is only expired or revoked says which and how to get a new one, in `detail` and in ' +
        '`WWW-Authenticate: Bearer error="invalid_token", error_description="…"` (RFC 6750)',
      headers: {
        'WWW-Authenticate': {
          description: 'For an expired or revoked token: `Bearer error="invalid_token", error_description="…"`',
          schema: { type: 'string' },
        },
      },
      content: {
        'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
        'application/json': {
          schema: {
            type: 'object',
            required: ['message'],
            properties: { message: { const: 'Unauthorized' } },
            additionalProperties: false,
          },
        },
      },
    };
    errors['403'] = problemResponse(
      `The token may not call this operation: \`detail\` names what it has and what ${route.specId ?? route.id} needs (${describeNeed(route.access, route.scopes)})`,
    );
  }
  if (route.path.includes('{')) errors['404'] = problemResponse('Not found, or not visible to the caller');
  if (route.method !== 'GET' || docs?.errors?.[409]) {
    errors['409'] = problemResponse(docs?.errors?.[409] ?? 'Conflict with the current state');
  }
  if (docs?.errors?.[410]) errors['410'] = problemResponse(docs.errors[410]);
  if (route.request?.body) {
    errors['413'] = problemResponse(
      route.maxBodyBytes === undefined
        ? 'The body is larger than 1 MiB (`payload_too_large`)'
        : `The body is larger than ${route.maxBodyBytes} bytes (\`payload_too_large\`)`,
    );
    errors['415'] = problemResponse(
      route.request.acceptsForm
        ? 'The body is neither application/json nor application/x-www-form-urlencoded (`unsupported_media_type`)'
        : 'The body is not application/json (`unsupported_media_type`)',
    );
  }
  for (const status of [413, 415, 422] as const) {
    const own = docs?.errors?.[status];
    if (own) errors[String(status)] = problemResponse(own);
  }
  const failure = route.documented?.failure;
  if (failure) {
    const own = (description: string) => ({
      description,
      content: { 'application/json': { schema: replySchema(failure) } },
    });
    errors['400'] = own('A missing `bucket` or `object_key`');
    errors['404'] = own('No such object, or not the caller’s organisation’s');
  }
  // Stage throttling (API Gateway, every route) can answer 429 anywhere; A1 and T10 also rate-limit wrong passwords.
  errors['429'] = problemResponse(
    docs?.errors?.[429] ??
      'Too many requests: `rate_limited` with `Retry-After` (A1, T10 wrong passwords), or API Gateway stage throttling',
  );
  errors['500'] = problemResponse('Unexpected server error');
  errors['503'] = problemResponse('A dependency is unavailable (`unavailable`, contract section 2)');
  // Every other status of contract section 2 is problem+json too.
  errors['default'] = problemResponse('Any other failure (contract section 2)');
  return errors;
}

function operation(route: RouteDef) {
  const access =
    typeof route.access === 'string' ? route.access : `roles: ${(route.access as readonly string[]).join(', ')}`;
  const roles = typeof route.access === 'string' ? [] : [...(route.access as readonly string[])];
  const scopes = [...(route.scopes ?? [])];
  // Who may call, in the words of the 403's detail (contract section 3), for a person reading /docs.
  const who =
    route.access === 'public'
      ? 'public (no token)'
      : `${describeNeed(route.access, route.scopes)}${scopes.length > 0 ? ' (a partner then answers as an OrgAdmin of its organisation)' : ''}`;
  const body = route.request?.body;
  const docs = docsOf(route.id);
  const example = docs?.example;
  const bodyContent = (schema: JsonSchema) => ({
    schema,
    ...(example?.body !== undefined ? { example: example.body } : {}),
  });
  return {
    operationId: route.id.replace(/[^A-Za-z0-9]/g, '_'),
    'x-spec-id': route.specId ?? route.id,
    'x-access': access,
    'x-roles': roles,
    'x-scopes': scopes,
    summary: route.summary,
    description: `${docs?.description ?? `${route.summary}.`}\n\nAccess: ${who}. Spec ${route.specId ?? route.id}.`,
    tags: [route.area],
    security: route.access === 'public' ? [] : [{ bearer: [] }],
    parameters: [
      ...parameters(route.request?.params, 'path', docs, example?.params),
      ...parameters(route.request?.query ?? route.documented?.query, 'query', docs, example?.query),
      ...parameters(route.request?.headers, 'header', docs, example?.headers),
      ...(route.method === 'POST'
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'Replays the first response for 24 hours (same key and body); another body is 409',
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
          ]
        : []),
    ],
    ...(docs?.multipart
      ? {
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: [docs.multipart, ...Object.keys(docs.multipartFields ?? {})],
                  properties: {
                    ...Object.fromEntries(
                      Object.entries(docs.multipartFields ?? {}).map(([name, description]) => [
                        name,
                        { type: 'string', format: 'uuid', maxLength: 36, description },
                      ]),
                    ),
                    [docs.multipart]: {
                      type: 'array',
                      description: 'One part per CSV file: a tasks file and at most one items file',
                      items: { type: 'string', format: 'binary', maxLength: 6 * 1024 * 1024 },
                      maxItems: 2,
                    },
                  },
                },
              },
            },
          },
        }
      : {}),
    ...(body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': bodyContent(describedSchema(jsonSchema(body), docs, 'body')),
              ...(route.request?.acceptsForm
                ? { 'application/x-www-form-urlencoded': bodyContent(describedSchema(jsonSchema(body), docs, 'body')) }
                : {}),
            },
          },
        }
      : {}),
    responses: { ...successResponses(route), ...errorResponses(route, docs) },
  };
}

const INT32 = 2 ** 31;

/**
 * Every integer schema says its width (`int32` when its bounds fit, else `int64`): JSON Schema has no integer width
 * of its own, and generated clients pick their integer types from `format`.
 */
function withIntegerFormats<T>(node: T): T {
  if (Array.isArray(node)) {
    for (const item of node) withIntegerFormats(item);
  } else if (node && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    if (schema['type'] === 'integer' && schema['format'] === undefined) {
      const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : -Infinity;
      const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : Infinity;
      schema['format'] = min >= -INT32 && max < INT32 ? 'int32' : 'int64';
    }
    for (const value of Object.values(schema)) withIntegerFormats(value);
  }
  return node;
}

export function openApiDocument(serverUrl = '/') {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes as readonly RouteDef[]) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = withIntegerFormats(operation(route));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dispatch operations service',
      version: '1.0.0',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description:
        'Accounts, tokens, notifications, driver locations, task imports and runsheet broadcast planning. ' +
        'Errors are RFC 9457 problem+json; every response carries X-Request-Id.',
    },
    // Apps and partner integrators call it over the internet: not an internal-only server.
    servers: [{ url: serverUrl, 'x-internal': false }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'ES256 JWTs following RFC8725 (JWT best current practices): the algorithm is pinned, `iss`, `aud` and ' +
            '`exp` are verified, keys are published at /.well-known/jwks.json.',
        },
      },
      schemas: { Problem: withIntegerFormats(problemSchema) },
    },
    paths,
  };
}

/**
 * The WebSocket events (`shared/notifications/events.ts`) as a document of their own: one closed schema per channel
 * kind (`DriverEvents`, `OrgEvents`, `PlanningEvents`) whose members are the event names and their `data`. The
 * client's event types are generated from it (`npm run client`), and the e2e tests check every event frame they
 * receive against it (test/support/sockets.ts).
 */
export function eventsDocument() {
  const schemas: Record<string, JsonSchema> = {};
  for (const [kind, events] of Object.entries(CHANNEL_EVENTS)) {
    const named = events as Record<string, GenericSchema>;
    schemas[kind] = {
      type: 'object',
      properties: Object.fromEntries(Object.entries(named).map(([name, schema]) => [name, replySchema(schema)])),
      required: Object.keys(named),
      additionalProperties: false,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Dispatch WebSocket events', version: '1.0.0' },
    paths: {},
    components: { schemas },
  };
}
