// GET /health, GET /openapi.json, GET /docs and GET /docs/assets/{file} in the cloud (public, issue 42 item 12): what
// the local host answers on the same paths (shared/reference/page.ts). The Swagger UI files travel in the bundle's
// docs-assets/ (copied at bundling, see the API stack), and so does the OpenAPI document, generated then
// (lib/reference-build.ts) with `DOCUMENT_SERVER` where the API's own URL goes.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { notFound } from '#shared/http/problems';
import { CORS_HEADERS, problemAsReply, toResult } from '#shared/http/responses';
import { CACHE, DOCS_ASSETS, DOCS_PAGE, DOCUMENT_SERVER, HEALTH } from '#shared/reference/page';

const ASSETS = join(process.env['LAMBDA_TASK_ROOT'] ?? '.', 'docs-assets');
/** The document names the API's own URL as its server: one per domain the API is called on. */
const documents = new Map<string, string>();
let bundled: string | undefined;

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => {
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const missing = () => toResult(problemAsReply(notFound('asset'), requestId), requestId);
  const file = event.pathParameters?.['file'];
  if (file !== undefined) {
    const type = Object.hasOwn(DOCS_ASSETS, file) ? DOCS_ASSETS[file] : undefined;
    const body = type ? await readFile(join(ASSETS, file)).catch(() => undefined) : undefined;
    if (!type || !body) return missing();
    return {
      statusCode: 200,
      headers: { 'Content-Type': type, 'Cache-Control': CACHE.asset, 'X-Content-Type-Options': 'nosniff' },
      body: body.toString('base64'),
      isBase64Encoded: true,
    };
  }
  switch (event.rawPath) {
    case '/health':
      return {
        statusCode: 200,
        headers: { ...CORS_HEADERS, 'Content-Type': 'application/json', 'Cache-Control': CACHE.health },
        body: JSON.stringify(HEALTH),
      };
    case '/openapi.json': {
      const server = `https://${event.requestContext.domainName}`;
      let document = documents.get(server);
      if (!document) {
        bundled ??= await readFile(join(ASSETS, 'openapi.json'), 'utf8').catch(() => undefined);
        if (bundled === undefined) return missing();
        document = bundled.replaceAll(DOCUMENT_SERVER, server);
        documents.set(server, document);
      }
      return {
        statusCode: 200,
        headers: { ...CORS_HEADERS, 'Content-Type': 'application/json', 'Cache-Control': CACHE.reference },
        body: document,
      };
    }
    case '/docs':
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': CACHE.reference },
        body: DOCS_PAGE,
      };
    default:
      return missing();
  }
};
