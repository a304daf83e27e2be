import { describe, expect, it } from 'vitest';
import {
  conflict,
  credentialRequired,
  forbidden,
  gone,
  invalidAt,
  limitExceeded,
  notFound,
  tooLarge,
  unsupportedMediaType,
} from '#shared/errors';
import * as http from '#shared/http/problems';

/** A domain error answers exactly the problem the HTTP floor's own helper would have built (contract section 2). */
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
    same(http.problemOf(gone('used')), http.gone('used'));
    same(http.problemOf(forbidden('no')), http.forbidden('no'));
    same(http.problemOf(limitExceeded('slow down and retry later', 7)), http.rateLimited(7));
    // A missing or unproven credential: 401 without the challenge a credential that held once gets.
    same(http.problemOf(credentialRequired()), http.unauthenticated());
    same(http.problemOf(tooLarge('the body exceeds 10 bytes')), http.payloadTooLarge(10));
    same(http.problemOf(unsupportedMediaType('multipart/form-data')), http.unsupportedMediaType('multipart/form-data'));
  });

  it('keeps a conflict’s field errors and leaves anything else to the caller', () => {
    expect(http.problemOf(conflict('x', 'conflict', [{ path: 'task_ids[0]', message: 'taken' }])).errors).toEqual([
      { path: 'task_ids[0]', message: 'taken' },
    ]);
    expect(http.asProblem(new Error('boom'))).toBeUndefined();
  });
});
