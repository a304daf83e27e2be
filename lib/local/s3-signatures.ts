/**
 * SigV4 checked as S3 checks it, in front of s3rver (which checks no V4 signature at all): a request signed in its
 * Authorization header (the SDKs, awscli, boto3) or a presigned URL (X-Amz-* query parameters) passes only when its
 * signature is the one the stand-in's key pair gives for what arrived: method, path, every query parameter, every
 * signed header (a presigned PUT's Content-Type and Content-Length), the signing date and the credential scope. An
 * unsigned request (a listing, a browser form's POST) is a 403 AccessDenied, a changed one a 403 SignatureDoesNotMatch,
 * an expired URL a 403 too. The canonical request and the signature are computed by @smithy/signature-v4, the
 * signer the SDK itself uses; this file only reads the request into its terms.
 *
 * Not checked (S3 checks it, the service never relies on it): that a header-signed body matches its
 * `x-amz-content-sha256`, and the chunk signatures of an aws-chunked upload.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';

export interface KeyPair {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The local S3 stand-in's one key pair (s3rver's): the functions, awscli and boto3 sign with it locally. */
export const LOCAL_CREDENTIALS: KeyPair = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** Why S3 would refuse the request (its error code, status and message), or undefined when it would accept it. */
export interface Refusal {
  code: string;
  status: number;
  message: string;
}

const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/** The hash and HMAC the signer asks for, from node:crypto. */
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

const MAX_SKEW_MS = 15 * 60_000;
const WEEK_SECONDS = 604_800;

const refuse = (code: string, message: string, status = 403): Refusal => ({ code, status, message });
const MISMATCH = refuse(
  'SignatureDoesNotMatch',
  'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
);

/** `a=1&b=%2F` as S3 reads it: `+` is a plus, not a space (URLSearchParams would make it one). */
function queryOf(raw: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const key = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
    const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1));
    const existing = query[key];
    query[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return query;
}

/** `20261127T031500Z` as a date, or undefined. */
function amzDate(value: string | undefined): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '');
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, s));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const sameHex = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The signed headers' values as they arrived (a missing one stays missing: the signature then cannot match). */
function signedHeadersOf(names: string[], headers: IncomingHttpHeaders): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (value !== undefined) picked[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return picked;
}

interface Scope {
  accessKeyId: string;
  day: string;
  region: string;
  service: string;
}

function scopeOf(credential: string): Scope | undefined {
  const [accessKeyId, day, region, service, terminator, ...rest] = credential.split('/');
  if (!accessKeyId || !day || !region || !service || terminator !== 'aws4_request' || rest.length) return undefined;
  return { accessKeyId, day, region, service };
}

/**
 * S3's verdict on one request, from its method, its raw request target (path and query as sent) and its headers,
 * for a server whose only key pair is `keys`.
 */
export async function refusalOf(
  method: string,
  target: string,
  headers: IncomingHttpHeaders,
  keys: KeyPair,
  now = new Date(),
): Promise<Refusal | undefined> {
  const at = target.indexOf('?');
  const path = at < 0 ? target : target.slice(0, at);
  let query: Record<string, string | string[]>;
  try {
    query = queryOf(at < 0 ? '' : target.slice(at + 1));
  } catch {
    return refuse('InvalidArgument', 'The query string is not valid percent-encoding.', 400);
  }
  const one = (name: string) => {
    const value = query[name];
    return Array.isArray(value) ? undefined : value;
  };
  const presigned = 'X-Amz-Algorithm' in query;
  const authorization = headers.authorization;
  if (presigned && authorization) {
    return refuse('InvalidArgument', 'Only one auth mechanism allowed', 400);
  }
  if (!presigned && !authorization) return refuse('AccessDenied', 'Access Denied');

  let credential: string | undefined;
  let signedNames: string[];
  let signature: string | undefined;
  let date: Date | undefined;
  if (presigned) {
    if (one('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') {
      return refuse('AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"', 400);
    }
    credential = one('X-Amz-Credential');
    signedNames = (one('X-Amz-SignedHeaders') ?? '').split(';').filter(Boolean);
    signature = one('X-Amz-Signature');
    date = amzDate(one('X-Amz-Date'));
    const expires = Number(one('X-Amz-Expires'));
    if (!credential || !signature || !date || !signedNames.length || !Number.isInteger(expires) || expires < 0) {
      return refuse(
        'AuthorizationQueryParametersError',
        'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
        400,
      );
    }
    if (expires > WEEK_SECONDS) {
      return refuse('AuthorizationQueryParametersError', 'X-Amz-Expires must be less than a week (in seconds)', 400);
    }
    if (now.getTime() > date.getTime() + expires * 1000) return refuse('AccessDenied', 'Request has expired');
  } else {
    const match = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(
      String(authorization).trim(),
    );
    if (!match) {
      return refuse(
        'AuthorizationHeaderMalformed',
        'The authorization header is malformed (only SigV4 is accepted).',
        400,
      );
    }
    credential = match[1];
    signedNames = match[2]!.split(';');
    signature = match[3];
    date = amzDate(String(headers['x-amz-date'] ?? ''));
    if (!date) return refuse('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    if (Math.abs(now.getTime() - date.getTime()) > MAX_SKEW_MS) {
      return refuse(
        'RequestTimeTooSkewed',
        'The difference between the request time and the current time is too large.',
      );
    }
    if (headers['x-amz-content-sha256'] === undefined) {
      return refuse('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256', 400);
    }
  }
  const scope = scopeOf(credential ?? '');
  if (!scope) return refuse('AuthorizationHeaderMalformed', 'The credential scope is malformed.', 400);
  if (scope.accessKeyId !== keys.accessKeyId) {
    return refuse('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  }
  if (scope.day !== date.toISOString().slice(0, 10).replace(/-/g, '')) return MISMATCH;
  if (!signedNames.includes('host')) return MISMATCH;

  const signer = new SignatureV4({
    credentials: keys,
    region: scope.region,
    service: scope.service,
    sha256: Sha256,
    // S3 signs the path as sent, without normalising or encoding it again.
    uriEscapePath: false,
    applyChecksum: false,
  });
  const signable = new Set(signedNames);
  const picked = signedHeadersOf(signedNames, headers);
  const base = { method, protocol: 'http:', hostname: String(headers.host ?? ''), path, query: { ...query } };
  let expected: { signature?: string; signedHeaders?: string };
  if (presigned) {
    delete base.query['X-Amz-Signature'];
    // A presigned URL's payload is always UNSIGNED-PAYLOAD; the signer reads it from this header, left unsigned.
    const sha = 'x-amz-content-sha256';
    const signed = await signer.presign(
      { ...base, headers: { ...picked, ...(sha in picked ? {} : { [sha]: 'UNSIGNED-PAYLOAD' }) } },
      {
        signingDate: date,
        expiresIn: Number(one('X-Amz-Expires')),
        signableHeaders: signable,
        unsignableHeaders: signable.has(sha) ? new Set() : new Set([sha]),
        unhoistableHeaders: new Set([...signedNames, sha]),
      },
    );
    expected = {
      signature: String(signed.query?.['X-Amz-Signature']),
      signedHeaders: String(signed.query?.['X-Amz-SignedHeaders']),
    };
  } else {
    const sha = String(headers['x-amz-content-sha256']);
    const signed = await signer.sign(
      { ...base, headers: { ...picked, 'x-amz-content-sha256': sha } },
      { signingDate: date, signableHeaders: signable },
    );
    const header = /SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(String(signed.headers['authorization']));
    expected = { signedHeaders: header?.[1], signature: header?.[2] };
  }
  if (expected.signedHeaders !== signedNames.join(';')) return MISMATCH;
  if (!expected.signature || !sameHex(expected.signature, signature ?? '')) return MISMATCH;
  return undefined;
}
