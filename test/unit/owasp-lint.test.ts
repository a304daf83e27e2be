/**
 * The OWASP API Security Top 10 lint (Spectral's OWASP ruleset) over the OpenAPI document: nothing on requests, and
 * every finding left elsewhere (responses, the document itself) or on a request field the ruleset misreads is listed
 * below with the reason it stays. An entry that no longer matches anything fails too, so the list stays true.
 */
import spectralCore from '@stoplight/spectral-core';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { Json } from '@stoplight/spectral-parsers';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi.ts';

type Side = 'request' | 'response' | 'document';

interface Finding {
  rule: string;
  side: Side;
  /** The request field (last property name, or the parameter's name), or the JSON path elsewhere. */
  field: string;
  path: string;
}

interface Allowance {
  rule: string;
  side: Side;
  /** Request fields the allowance covers; absent: every finding of the rule on that side. */
  fields?: readonly string[];
  reason: string;
}

const rule = (name: string) => `owasp:${name}`;

const ALLOWED: readonly Allowance[] = [
  // Requests: the ruleset's false positives.
  {
    rule: rule('api4:2023-string-restricted'),
    side: 'request',
    fields: [
      'name',
      'title',
      'body',
      'reason',
      'street_address',
      'city',
      'state',
      'country',
      'sound',
      'file_name',
      'filename',
      'building_name',
      'zip_code',
      'broadcast_preference',
      'cargo_net_quantity',
      'total_weight_unit',
      'total_volume_unit',
      'search',
      'note',
      'recipient_name',
    ],
    reason:
      'Free text (names, addresses, titles, reasons, notification bodies, a search prefix, a delivery’s note and recipient) has no format or pattern ' +
      'that would be true; each is bounded by maxLength (string-limit is at zero) and, where single-line, refuses ' +
      'control characters.',
  },
  {
    rule: rule('api4:2023-string-restricted'),
    side: 'request',
    fields: [
      'password',
      'current_password',
      'refresh_token',
      'invitation_token',
      'reset_password_token',
      'client_key',
      'application_key',
      'push_notification_key',
      'key',
      'auth_code',
      'checksum',
      'checksum_method',
      'page_token',
      'Idempotency-Key',
      'token',
    ],
    reason:
      'Passwords and opaque tokens and keys: a pattern would describe how they are made today and invite clients ' +
      'to parse them. Each is bounded by maxLength; a wrong one is refused by its lookup (400, 401 or 410).',
  },
  {
    rule: rule('api4:2023-string-restricted'),
    side: 'request',
    fields: [
      'id',
      'runsheetID',
      'runsheet_ids',
      'taskID',
      'code',
      'device_id',
      'channel',
      'event_type',
      'errors',
      'warnings',
      'version_rev',
    ],
    reason:
      'Identifiers and labels chosen by clients (runsheet and task ids, X20’s taskID, device ids, import error and warning texts, channel ' +
      'and event names, a driver profile’s version_rev) are opaque to the service; bounded by maxLength.',
  },
  {
    rule: rule('api4:2023-string-restricted'),
    side: 'request',
    fields: [
      'client_timezone',
      'start_timezone',
      'end_timezone',
      'phone',
      'phone_number',
      'emails',
      'webhook_url',
      'url',
      'storage_upload_bucket',
      'storage_upload_key',
      'bucket',
      'object_key',
      'propertyNames',
    ],
    reason:
      'Checked in code rather than by a pattern: IANA zone names against the runtime’s zone list, phone digits, ' +
      'each bulk address one by one (a bad one lands in failed[]), webhook URLs for https and a public address, ' +
      'file URLs when fetched, S3 bucket and key names by S3; keys of free-form data objects are bounded by maxLength.',
  },
  {
    rule: rule('api2:2023-no-credentials-in-url'),
    side: 'request',
    fields: ['page_token'],
    reason: '`page_token` is a paging cursor (contract section 1), not a credential: the ruleset matches its name.',
  },
  {
    rule: rule('api2:2023-no-credentials-in-url'),
    side: 'request',
    fields: ['token'],
    reason:
      'X29’s `token` is a tracking link (contract 4.11): a capability a recipient opens from a message, so it is the ' +
      'URL by design. It reads one task’s public view only, is 256 bits, stored hashed, revocable (X28), expires, and ' +
      'is held to 60 requests a minute per token and per address (docs/tracking.md).',
  },
  // Responses: the service writes them, so their bounds document nothing a client must keep to.
  ...['api4:2023-string-limit', 'api4:2023-string-restricted', 'api4:2023-integer-limit', 'api4:2023-array-limit'].map(
    (name) => ({
      rule: rule(name),
      side: 'response' as const,
      reason: 'Response bodies are written by the service, not input; the request side carries every bound.',
    }),
  ),
  {
    rule: rule('api4:2023-rate-limit'),
    side: 'response',
    reason:
      'API Gateway throttles the stage and sends no rate-limit headers on other answers; throttling answers 429 ' +
      '(documented on every operation) with Retry-After where the service itself limits (A1, T10).',
  },
  {
    rule: rule('api8:2023-define-error-responses-401'),
    side: 'response',
    reason:
      'Public operations with nothing to authenticate (registration, security codes, invitations, password ' +
      'resets, the public keys) cannot answer 401; every operation that checks a credential documents it.',
  },
  {
    rule: rule('api8:2023-define-cors-origin'),
    side: 'response',
    reason: 'I8 answers with the file’s own bytes or a presigned redirect; its CORS headers are the stage’s.',
  },
  // The document itself.
  {
    rule: rule('api5:2023-admin-security-unique'),
    side: 'document',
    reason:
      'Administrative operations use the same bearer scheme as the rest; who may call them is the token’s role ' +
      '(SysAdmin), checked by the handler kit (403 otherwise), not a separate scheme.',
  },
  {
    rule: rule('api2:2023-write-restricted'),
    side: 'document',
    reason:
      'Sign-in, registration, confirmation, password reset and the token endpoints are public by the contract: ' +
      'their credential is in the request body or a header of their own.',
  },
  {
    rule: rule('api2:2023-read-restricted'),
    side: 'document',
    reason: '/.well-known/jwks.json publishes the public signing keys: public by design.',
  },
  ...['api4:2023-string-limit', 'api4:2023-string-restricted', 'api4:2023-integer-limit', 'api4:2023-array-limit'].map(
    (name) => ({
      rule: rule(name),
      side: 'document' as const,
      reason: 'The shared Problem schema describes error responses, which the service writes.',
    }),
  ),
];

const STRUCTURAL = new Set([
  'properties',
  'items',
  'anyOf',
  'oneOf',
  'allOf',
  'schema',
  'requestBody',
  'content',
  'application/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
]);

let findings: Finding[] = [];

beforeAll(async () => {
  const document = openApiDocument() as unknown as {
    paths: Record<string, Record<string, { parameters?: { name: string }[] }>>;
  };
  const { Spectral, Document } = spectralCore;
  const spectral = new Spectral();
  spectral.setRuleset(owasp as Parameters<InstanceType<typeof Spectral>['setRuleset']>[0]);
  const results = await spectral.run(new Document(JSON.stringify(document), Json));
  findings = results.map((result) => {
    const path = result.path.map(String);
    const parameter = path.indexOf('parameters');
    const side: Side =
      parameter >= 0 || path.includes('requestBody') ? 'request' : path.includes('responses') ? 'response' : 'document';
    let field = path.join('.');
    if (side === 'request' && parameter >= 0) {
      field = document.paths[path[1]!]![path[2]!]!.parameters![Number(path[parameter + 1])]!.name;
    } else if (side === 'request') {
      field = path.filter((segment) => !STRUCTURAL.has(segment) && !/^\d+$/.test(segment)).at(-1) ?? field;
    }
    return { rule: String(result.code), side, field, path: path.join('.') };
  });
}, 60_000);

const covers = (allowance: Allowance, finding: Finding) =>
  allowance.rule === finding.rule &&
  allowance.side === finding.side &&
  (!allowance.fields || allowance.fields.includes(finding.field));

describe('the OWASP lint of the OpenAPI document', () => {
  it('finds nothing on requests but the listed false positives, and nothing unlisted anywhere', () => {
    const left = findings.filter((finding) => !ALLOWED.some((allowance) => covers(allowance, finding)));
    expect(left.map((f) => `${f.rule} ${f.side} ${f.field} (${f.path})`)).toEqual([]);
    const counts = new Map<Side, number>();
    for (const finding of findings) counts.set(finding.side, (counts.get(finding.side) ?? 0) + 1);
    console.info(
      `OWASP lint: ${findings.length} findings, all listed (${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')})`,
    );
  });

  it('has no bound missing on any request string, array or integer', () => {
    const unbounded = findings.filter(
      (f) => f.side === 'request' && /string-limit|array-limit|integer-limit|integer-format|rate-limit/.test(f.rule),
    );
    expect(unbounded.map((f) => `${f.rule} ${f.path}`)).toEqual([]);
  });

  it('lists no allowance that matches nothing', () => {
    const stale: string[] = [];
    for (const allowance of ALLOWED) {
      for (const field of allowance.fields ?? [undefined]) {
        const narrowed = field === undefined ? allowance : { ...allowance, fields: [field] };
        if (!findings.some((finding) => covers(narrowed, finding)))
          stale.push(`${allowance.rule} ${allowance.side} ${field ?? '*'}`);
      }
    }
    expect(stale).toEqual([]);
  });
});
