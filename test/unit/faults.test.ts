/** What counts as a dependency failure (503) and what stays a domain outcome. */
import { describe, expect, it } from 'vitest';
import { isDependencyFailure } from '../../shared/aws/faults.ts';
import { isConditionalFailure } from '../../shared/db/client.ts';

const sdkError = (name: string, fault: 'client' | 'server', status: number) =>
  Object.assign(new Error(name), { name, $fault: fault, $metadata: { httpStatusCode: status } });
const cancelled = (...codes: string[]) =>
  Object.assign(sdkError('TransactionCanceledException', 'client', 400), {
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('isDependencyFailure', () => {
  it('takes throttling, server faults, timeouts and socket errors', () => {
    for (const error of [
      sdkError('ProvisionedThroughputExceededException', 'client', 400),
      sdkError('ThrottlingException', 'client', 400),
      sdkError('RequestLimitExceeded', 'client', 400),
      sdkError('InternalServerError', 'server', 500),
      sdkError('SlowDown', 'server', 503),
      Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ETIMEDOUT' }),
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      new Error('Failed to save in progress record', { cause: sdkError('InternalServerError', 'server', 500) }),
      cancelled('None', 'ThrottlingError'),
      cancelled('TransactionConflict', 'None'),
    ]) {
      expect(isDependencyFailure(error), error.message).toBe(true);
    }
  });

  it('leaves domain outcomes and bugs alone', () => {
    for (const error of [
      sdkError('ConditionalCheckFailedException', 'client', 400),
      sdkError('ValidationException', 'client', 400),
      sdkError('ResourceNotFoundException', 'client', 400),
      cancelled('ConditionalCheckFailed', 'ThrottlingError'),
      new TypeError('x is undefined'),
    ]) {
      expect(isDependencyFailure(error), error.message).toBe(false);
    }
  });

  it('keeps a throttled transaction from reading as a failed condition', () => {
    expect(isConditionalFailure(cancelled('None', 'ThrottlingError'))).toBe(false);
    expect(isConditionalFailure(cancelled('ConditionalCheckFailed', 'None'))).toBe(true);
  });
});
