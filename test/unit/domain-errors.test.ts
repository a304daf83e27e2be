import { describe, expect, it } from 'vitest';
import {
  conflict,
  credentialNoLongerValid,
  dependencyUnavailable,
  forbidden,
  gone,
  invalidAt,
  limitExceeded,
  notFound,
  tooLarge,
  unauthenticated,
  unsupportedMediaType,
} from '#shared/errors';
import * as http from '#shared/http/problems';

/**
 * A domain error answers exactly the problem the HTTP floor's own helper built for it, or (where the domain alone
 * raises it now: 401, 410, 429) the problem itself, as the contract's section 2 gives it.
 */
describe('problemOf', () => {
  const same = (a: http.Problem, b: http.Problem) =>
    expect({ ...http.problemBody(a, 'r'), headers: a.headers }).toEqual({
      ...http.problemBody(b, 'r'),
      headers: b.headers,
    });

  it('maps each kind to the status, title, code, detail and errors the contract gives it', () => {
    same(
      http.problemOf(invalidAt('user.email', 'must be an email address')),
      http.invalidField('user.email', 'must be an email address'),
    );
    same(http.problemOf(notFound('planning')), http.notFound('planning'));
    same(http.problemOf(conflict('it moved', 'timeline_full')), http.conflict('it moved', 'timeline_full'));
    same(http.problemOf(gone('used')), new http.Problem(410, 'gone', 'Gone', 'used'));
    same(http.problemOf(forbidden('no')), http.forbidden('no'));
    same(
      http.problemOf(limitExceeded('slow down and retry later', 7)),
      new http.Problem(429, 'rate_limited', 'Too many requests', 'slow down and retry later', [], {
        'Retry-After': '7',
      }),
    );
    same(http.problemOf(dependencyUnavailable(1, 'not now')), http.unavailable(1, 'not now'));
    same(http.problemOf(tooLarge('the body exceeds 10 bytes')), http.payloadTooLarge(10));
    same(http.problemOf(unsupportedMediaType('multipart/form-data')), http.unsupportedMediaType('multipart/form-data'));
  });

  it('answers the generic 401 without a challenge, and a credential that held once with RFC 6750’s', () => {
    same(
      http.problemOf(unauthenticated()),
      new http.Problem(401, 'unauthenticated', 'Authentication required', 'a valid credential is required'),
    );
    expect(http.problemOf(credentialNoLongerValid('the bearer token expired; sign in again')).headers).toEqual({
      'WWW-Authenticate': 'Bearer error="invalid_token", error_description="the bearer token expired; sign in again"',
    });
  });

  it('keeps a conflict’s field errors and leaves anything else to the caller', () => {
    expect(http.problemOf(conflict('x', 'conflict', [{ path: 'task_ids[0]', message: 'taken' }])).errors).toEqual([
      { path: 'task_ids[0]', message: 'taken' },
    ]);
    expect(http.asProblem(new Error('boom'))).toBeUndefined();
  });
});
