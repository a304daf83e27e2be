import { describe, expect, it } from 'vitest';
import { accessAllows, checkAccess } from '../../shared/auth/access.ts';
import type { Caller } from '../../shared/auth/caller.ts';
import { INTERNAL_ROLES } from '../../shared/auth/roles.ts';
import { DomainError } from '../../shared/errors.ts';
import { problemOf } from '../../shared/http/problems.ts';
import type { RouteDef } from '../../shared/routes.ts';

const user = (roles: Caller['roles']): Caller => ({ kind: 'user', id: 'u', roles, orgId: null });
const worker: Caller = { kind: 'client', id: 'c', roles: ['ImportWorker'], orgId: null };

const statusOf = (fn: () => void): number | 'ok' => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return problemOf(error as DomainError).status;
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

  it('opens a route to a partner through a scope the route names, never through the role alone', () => {
    const partner = (scopes?: Caller['scopes']): Caller => ({
      kind: 'client',
      id: 'p',
      roles: ['Partner'],
      orgId: 'org',
      ...(scopes ? { scopes } : {}),
    });
    const i4b = { id: 'I4b', access: ['OrgAdmin', 'Merchant'], scopes: ['imports'] } as const;
    expect(statusOf(() => checkAccess(i4b.access, partner(['imports']), i4b))).toBe('ok');
    expect(statusOf(() => checkAccess(i4b.access, partner(['plannings']), i4b))).toBe(403);
    // A partner token from before scopes (no `scope` claim) holds the default, users:invite.
    expect(accessAllows([], partner(), ['users:invite'])).toBe(true);
    expect(accessAllows([], partner([]), ['users:invite'])).toBe(false);
    // A user never passes by a scope, whatever its token says.
    expect(accessAllows(['SysAdmin'], { ...user(['OrgAdmin']), scopes: ['imports'] }, ['imports'])).toBe(false);
  });

  it('says in the 403 what the token has and what the operation needs', () => {
    const detailOf = (fn: () => void) => {
      try {
        fn();
      } catch (error) {
        return (error as DomainError).message;
      }
      return undefined;
    };
    const partner: Caller = { kind: 'client', id: 'p', roles: ['Partner'], orgId: 'o', scopes: ['users:invite'] };
    expect(
      detailOf(() =>
        checkAccess(['OrgAdmin', 'OrgTransporter', 'Merchant'], partner, { id: 'I4a', scopes: ['imports'] }),
      ),
    ).toBe(
      'your token has Partner with scopes users:invite; I4a needs OrgAdmin, OrgTransporter, Merchant or a partner scope imports',
    );
    expect(
      detailOf(() => checkAccess(['SysAdmin'], user(['OrgAdmin', 'OrgDriver']), { id: 'I1.ops', specId: 'I1' })),
    ).toBe('your token has OrgAdmin, OrgDriver; I1 needs SysAdmin');
    expect(detailOf(() => checkAccess(['SysAdmin', 'OrgAdmin'], worker, { id: 'A13' }))).toBe(
      'your token has ImportWorker; A13 needs SysAdmin or OrgAdmin',
    );
    expect(detailOf(() => checkAccess('users', worker, { id: 'X9' }))).toBe(
      'your token has ImportWorker; X9 needs a user token (partner and internal client tokens may not call it)',
    );
  });

  it('throws the domain’s errors (answered as problems by the HTTP floor), not plain errors', () => {
    expect(() => checkAccess(['SysAdmin'], user([]))).toThrow(DomainError);
  });
});

describe('the handler factory, for every route of the table', () => {
  it('answers 401/403 before validation and never calls the domain function for a refused caller', async () => {
    const { endpoint } = await import('../../shared/http/endpoint.ts');
    const { routes } = await import('../../shared/routes.ts');
    const { ROLES } = await import('../../shared/auth/roles.ts');
    const { toAuthorizerContext } = await import('../../shared/auth/authorizer-context.ts');
    const table = routes as readonly RouteDef[];
    const callers: (Caller | null)[] = [
      null,
      ...(Object.keys(ROLES) as Caller['roles']).map((role) => ({
        kind: INTERNAL_ROLES.includes(role as never) || role === 'Partner' ? ('client' as const) : ('user' as const),
        id: 'caller',
        roles: [role],
        orgId: null,
      })),
    ];
    let refused = 0;
    for (const route of table.filter((r) => r.access !== 'public')) {
      let reached = 0;
      const handler = endpoint([route], route.id, async () => {
        reached++;
        return { status: 200, body: {} };
      });
      for (const caller of callers) {
        if (accessAllows(route.access, caller, route.scopes)) continue;
        const reply = (await handler({
          rawPath: route.path,
          headers: { 'content-type': 'application/json' },
          body: '{"not":"valid for any route"}',
          requestContext: { http: { method: route.method }, authorizer: { lambda: toAuthorizerContext(caller) } },
        } as never)) as { statusCode: number; headers: Record<string, string> };
        expect(reply.statusCode, `${route.id} as ${caller?.roles[0] ?? 'nobody'}`).toBe(caller ? 403 : 401);
        expect(reply.headers['Content-Type']).toBe('application/problem+json');
        refused++;
      }
      expect(reached, route.id).toBe(0);
    }
    expect(refused).toBeGreaterThan(table.length * 5);
  });
});
