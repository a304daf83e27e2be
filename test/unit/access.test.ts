import { describe, expect, it } from 'vitest';
import { accessAllows, checkAccess } from '../../shared/auth/access.ts';
import type { Caller } from '../../shared/auth/caller.ts';
import { Problem } from '../../shared/http/problems.ts';

const user = (roles: Caller['roles']): Caller => ({ kind: 'user', id: 'u', roles, orgId: null });
const worker: Caller = { kind: 'client', id: 'c', roles: ['ImportWorker'], orgId: null };

const statusOf = (fn: () => void): number | 'ok' => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return (error as Problem).status;
  }
};

describe('access rules of the route table', () => {
  it('lets anybody call a public route', () => {
    expect(statusOf(() => checkAccess('public', null))).toBe('ok');
  });

  it('answers 401 without a caller on any protected route', () => {
    for (const rule of ['any', 'users', ['SysAdmin']] as const)
      expect(statusOf(() => checkAccess(rule, null))).toBe(401);
  });

  it('keeps client tokens out of user-only routes', () => {
    expect(statusOf(() => checkAccess('users', worker))).toBe(403);
    expect(statusOf(() => checkAccess('users', user(['Driver'])))).toBe('ok');
    expect(statusOf(() => checkAccess('any', worker))).toBe('ok');
  });

  it('requires one of the listed roles', () => {
    expect(statusOf(() => checkAccess(['SysAdmin'], user(['OrgAdmin'])))).toBe(403);
    expect(statusOf(() => checkAccess(['SysAdmin', 'OrgAdmin'], user(['OrgAdmin'])))).toBe('ok');
    expect(accessAllows(['ImportWorker'], worker)).toBe(true);
  });

  it('throws problems, not plain errors', () => {
    expect(() => checkAccess(['SysAdmin'], user([]))).toThrow(Problem);
  });
});
