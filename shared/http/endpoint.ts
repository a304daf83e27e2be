/**
 * The handler factory: the one wrapper every endpoint goes through. It authenticates (from the authorizer's
 * context), checks the route's access rule, parses JSON, validates path/query/body with the route's valibot schemas,
 * opens and seals page tokens (shared/http/page-tokens.ts), honours Idempotency-Key on POST, maps thrown problems to
 * problem+json, adds CORS and X-Request-Id, and writes one structured log line per request. The function file holds only the call to the domain.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { checkAccess } from '#shared/auth/access';
import { resolveCaller } from '#shared/auth/authorizer';
import type { Caller } from '#shared/auth/caller';
import { isDependencyFailure, RETRY_AFTER_SECONDS } from '#shared/aws/faults';
import { clock } from '#shared/clock';
import { withCapacity } from '#shared/db/capacity';
import { runIdempotently } from '#shared/http/idempotency';
import { idempotencyScope, idSeed, payloadHash, storesReplies } from '#shared/http/idempotency-policy';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#shared/http/json-depth';
import { openQueryPageToken, pageTokenBinding, sealNextPageToken } from '#shared/http/page-tokens';
import {
  asProblem,
  internal,
  invalidField,
  malformedJson,
  payloadTooLarge,
  unavailable,
  unsupportedMediaType,
} from '#shared/http/problems';
import { problemAsReply, type Reply, toResult } from '#shared/http/responses';
import { validate } from '#shared/http/validate';
import { withIdSeed } from '#shared/ids';
import { logger } from '#shared/log';
import { metricsPublished, recordRequest } from '#shared/metrics';
import type { RouteDef } from '#shared/routes/types';

export const MAX_JSON_BODY_BYTES = 1024 * 1024;

type Part<R, K extends string> = R extends { request: { [P in K]: infer S } }
  ? S extends v.GenericSchema
    ? v.InferOutput<S>
    : Record<string, never>
  : Record<string, never>;
type CallerOf<R> = R extends { access: 'public' } ? Caller | null : Caller;

export interface Request<R> {
  params: Part<R, 'params'>;
  query: Part<R, 'query'>;
  body: Part<R, 'body'>;
  caller: CallerOf<R>;
  /** Lower-cased header names (validated by the route's header schema when it has one). */
  headers: Part<R, 'headers'> & Record<string, string | undefined>;
  requestId: string;
  event: APIGatewayProxyEventV2;
}

export type Handler = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyResultV2>;

/**
 * `table` is the area's own route table (shared/routes/<area>.ts), not the joined one, so that a function's bundle
 * carries only its area's schemas.
 */
export function endpoint<T extends readonly RouteDef[], Id extends T[number]['id']>(
  table: T,
  id: Id,
  fn: (request: Request<Extract<T[number], { id: Id }>>) => Promise<Reply>,
): Handler {
  const found = table.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no route ${id} in the route table`);
  const route: RouteDef = found;
  return async (event, context) => {
    const started = clock.nowMs();
    const headers = lowerCaseHeaders(event.headers);
    // The caller's id, else API Gateway's own (the access log's `requestId`: an operator follows one id from the
    // access log to the function's lines), else a fresh one (direct invocations).
    const requestId = headers['x-request-id']?.slice(0, 200) || event.requestContext?.requestId || randomUUID();
    logger.appendKeys({ request_id: requestId });
    let reply = undefined as unknown as Reply; // assigned inside the capacity scope below
    let caller = null as Caller | null;
    const { tally } = await withCapacity(
      async () => {
        try {
          caller = await resolveCaller(
            (event.requestContext as { authorizer?: { lambda?: Record<string, unknown> } }).authorizer?.lambda,
            headers['authorization'],
          );
          checkAccess(route.access, caller, route);
          const rawBody = decodeBody(event);
          const parsedBody = route.request?.body
            ? parseBody(rawBody, headers, route.request.acceptsForm === true, route.maxBodyBytes)
            : undefined;
          const request = {
            params: validate(route.request?.params ?? v.object({}), event.pathParameters ?? {}, 'path'),
            query: validate(route.request?.query ?? v.object({}), event.queryStringParameters ?? {}, 'query'),
            headers: route.request?.headers ? validate(route.request.headers, headers, 'header') : headers,
            body: route.request?.body ? validate(route.request.body, parsedBody, '') : {},
            caller,
            requestId,
            event,
          } as unknown as Request<Extract<T[number], { id: Id }>>;
          // Page tokens: the client's is opened (bound to this list, its filters and order, and this caller), the
          // next one sealed the same way; the domain only ever sees its own.
          const binding = () =>
            pageTokenBinding(
              route.id,
              request.params as Record<string, unknown>,
              request.query as Record<string, unknown>,
              caller,
            );
          await openQueryPageToken(request.query as Record<string, unknown>, binding);
          const idempotencyKey = route.method === 'POST' ? headers['idempotency-key'] : undefined;
          if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 255)) {
            throw invalidField('header.idempotency-key', 'must be 1 to 255 characters');
          }
          if (idempotencyKey !== undefined && storesReplies(route)) {
            const scope = idempotencyScope(route, caller, headers, parsedBody);
            const payload = payloadHash(parsedBody, rawBody);
            reply = await runIdempotently({ key: idempotencyKey, scope, payload, context }, () =>
              withIdSeed(idSeed(scope, idempotencyKey, payload), () => fn(request)),
            );
          } else {
            reply = await fn(request);
          }
          if (reply.status === 200) reply = { ...reply, body: await sealNextPageToken(reply.body, binding) };
        } catch (error) {
          reply = problemReply(error, requestId);
        }
      },
      route.id,
      () => reply?.status,
    );
    const durationMs = clock.nowMs() - started;
    // What a request line says beyond its metrics.
    const details = {
      request_id: requestId,
      method: route.method,
      path: event.rawPath,
      status: reply.status,
      caller_id: caller?.id,
      ddb_calls: tally.calls,
    };
    // One log line a request: a successful one's details are in its EMF metrics line (CloudWatch Logs ingestion is
    // priced by the byte, bench/cost-model.ts); an error answer, or any answer where no metrics are written, has the
    // request line of its own as well, and its EMF line then carries only the request id (no second copy).
    const requestLine = reply.status >= 400 || !metricsPublished();
    if (requestLine) {
      logger.info('request', { ...details, route: route.id, duration_ms: durationMs, rcu: tally.rcu, wcu: tally.wcu });
    }
    recordRequest(
      route.id,
      reply.status,
      durationMs,
      tally,
      requestLine ? { request_id: requestId } : emfDetails(details, route),
    );
    logger.removeKeys(['request_id']);
    return toResult(reply, requestId);
  };
}

/**
 * A success's details as its EMF line carries them (docs/monitoring.md, "The EMF line"): not the method, which the
 * operation (the line's dimension) says, nor the path where the route has no parameters (the operation says it
 * too; with parameters it holds the ids an operator looks for); the X-Ray trace id, as the logger's lines carry it.
 */
function emfDetails(
  { method: _method, path, ...details }: { method: string; path: string } & Record<string, string | number | undefined>,
  route: RouteDef,
): Record<string, string | number | undefined> {
  return { ...details, path: route.path.includes('{') ? path : undefined, xray_trace_id: xrayTraceId() };
}

/** The trace id (the `Root` of Lambda's `_X_AMZN_TRACE_ID`), the one the logger writes as `xray_trace_id`. */
function xrayTraceId(): string | undefined {
  return process.env['_X_AMZN_TRACE_ID']?.match(/Root=([^;]+)/)?.[1];
}

function problemReply(error: unknown, requestId: string): Reply {
  const problem = asProblem(error);
  if (problem) return problemAsReply(problem, requestId);
  if (isDependencyFailure(error)) {
    logger.warn('dependency unavailable', { request_id: requestId, error: error as Error });
    return problemAsReply(unavailable(RETRY_AFTER_SECONDS), requestId);
  }
  logger.error('unhandled error', { request_id: requestId, error: error as Error });
  return problemAsReply(internal(), requestId);
}

function lowerCaseHeaders(headers: APIGatewayProxyEventV2['headers'] | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

function decodeBody(event: APIGatewayProxyEventV2): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

function parseBody(
  raw: string,
  headers: Record<string, string | undefined>,
  acceptsForm: boolean,
  maxBytes = MAX_JSON_BODY_BYTES,
): unknown {
  if (Buffer.byteLength(raw) > maxBytes) throw payloadTooLarge(maxBytes);
  const type = headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  const form = acceptsForm && type === 'application/x-www-form-urlencoded';
  // JSON has no byte-order mark (RFC 8259 section 8.1), and JSON.parse's own message would show it invisibly.
  if (!form && raw.startsWith('\uFEFF')) {
    throw malformedJson('the body starts with a byte-order mark (U+FEFF, bytes EF BB BF); send the JSON without it');
  }
  if (raw.trim() === '') return {};
  if (form) return Object.fromEntries(new URLSearchParams(raw));
  if (type && type !== 'application/json' && !type.endsWith('+json')) {
    throw unsupportedMediaType(
      acceptsForm ? 'application/json or application/x-www-form-urlencoded' : 'application/json',
    );
  }
  if (nestsDeeperThan(raw)) throw invalidField('body', `nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw malformedJson(`the body is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidField('body', 'must be a JSON object');
  }
  const illFormed = illFormedString(parsed, '');
  if (illFormed !== undefined)
    throw invalidField(illFormed || 'body', 'is not valid Unicode (it holds a lone surrogate)');
  return parsed;
}

/** The path of the first string that is not well-formed UTF-16 (JSON lets `\ud800` through; DynamoDB does not). */
function illFormedString(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : path;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = illFormedString(item, `${path}[${i}]`);
      if (found !== undefined) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = illFormedString(item, path ? `${path}.${key}` : key);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
