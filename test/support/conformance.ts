/**
 * OpenAPI conformance: every response the end-to-end tests receive from an operation is checked against the
 * document the host serves at /openapi.json — the status must be documented (or fall to `default`), the content type
 * must be one the document names for it, and the body must match its schema. A mismatch fails the test that saw it.
 */

import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { matchRoute } from '../../lib/local/host.ts';

type Schema = Record<string, unknown>;
interface ResponseObject {
  content?: Record<string, { schema: Schema }>;
}
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: Schema;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const documents = new Map<string, Promise<Document>>();
const validators = new Map<string, ValidateFunction>();
let checked = 0;

/** How many responses were checked in this test file (the suites print it). */
export const conformanceChecks = () => checked;

function documentOf(baseUrl: string): Promise<Document> {
  let document = documents.get(baseUrl);
  if (!document) {
    document = fetch(`${baseUrl}/openapi.json`).then((r) => r.json() as Promise<Document>);
    documents.set(baseUrl, document);
  }
  return document;
}

function validator(key: string, schema: Schema, components: Schema): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    // `#/components/…` references resolve against the schema's own root, so the components travel with it.
    validate = ajv.compile({ ...schema, components });
    validators.set(key, validate);
  }
  return validate;
}

export async function checkConformance(
  baseUrl: string,
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): Promise<void> {
  const path = url.split('?')[0]!;
  if (method === 'OPTIONS' || !(path.startsWith('/v1/') || path.startsWith('/.well-known/'))) return;
  const document = await documentOf(baseUrl);
  const { route } = matchRoute(method, path);
  let responses: Record<string, ResponseObject>;
  let where: string;
  if (route) {
    responses = document.paths[route.path]?.[method.toLowerCase()]?.responses ?? {};
    where = `${route.id} (${method} ${route.path})`;
  } else {
    // No such operation (404) or method (405): still a problem+json of contract section 2.
    responses = {
      default: { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
    };
    where = `${method} ${path} (no operation)`;
  }
  const statusKey = String(status) in responses ? String(status) : 'default';
  const documented = responses[statusKey];
  if (!documented) throw new Error(`OpenAPI: ${where} answered ${status}, which the document does not list`);
  checked++;
  const content = documented.content;
  if (!content) return;
  const type = (contentType ?? '').split(';')[0]!.trim();
  const media = content[type] ? type : content['*/*'] ? '*/*' : undefined;
  if (!media)
    throw new Error(
      `OpenAPI: ${where} answered ${status} as ${type || 'no content type'}; the document says ${Object.keys(content).join(', ')}`,
    );
  if (media === '*/*') return;
  const validate = validator(`${where}|${statusKey}|${media}`, content[media]!.schema, document.components);
  if (!validate(body))
    throw new Error(
      `OpenAPI: ${where} answered ${status} with a body its schema refuses: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
}
