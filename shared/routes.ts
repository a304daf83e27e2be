/**
 * THE route table: one entry per operation. CDK, the local host, the OpenAPI generator and the tests read it;
 * nothing else lists routes. Adding an endpoint is one entry here, one thin file under functions/, and its
 * domain function.
 */
import type { GenericSchema } from 'valibot';
import * as accounts from '#shared/accounts/schemas';
import type { Role } from '#shared/auth/roles';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** The CDK stack an operation's function lives in: stacks are split by area to stay under resource limits. */
export type Area = 'auth' | 'accounts' | 'tokens' | 'notifications' | 'locations' | 'imports' | 'planning';

/**
 * Who may call. `public`: no token. `any`: any verified token, user or client. `users`: any user token
 * (partner and internal client tokens get 403). A role list: the caller must hold one of them.
 * Finer rules (own organisation, the paired driver) live in the domain functions.
 */
export type Access = 'public' | 'any' | 'users' | readonly Role[];

export interface RouteDef {
  /** The spec's operation number (A1 … R8), or an X/system id for operations the contract adds. */
  id: string;
  method: Method;
  /** Path template with `{name}` parameters, as API Gateway writes it. */
  path: string;
  area: Area;
  /** Handler module, relative to functions/ and without extension. */
  handler: string;
  access: Access;
  summary: string;
  /** Success status of contract section 1/4. */
  status: number;
  request?: {
    params?: GenericSchema;
    query?: GenericSchema;
    body?: GenericSchema;
  };
  response?: GenericSchema;
}

export const routes = [
  {
    id: 'JWKS',
    method: 'GET',
    path: '/.well-known/jwks.json',
    area: 'auth',
    handler: 'auth/jwks',
    access: 'public',
    summary: 'Public keys that verify service bearer tokens',
    status: 200,
    response: accounts.jwks,
  },
  {
    id: 'A1',
    method: 'POST',
    path: '/v1/auth/login',
    area: 'auth',
    handler: 'auth/login',
    access: 'public',
    summary: 'Log in with email and password',
    status: 200,
    request: { body: accounts.loginBody },
    response: accounts.loginResponse,
  },
  {
    id: 'T1',
    method: 'POST',
    path: '/v1/auth/refresh',
    area: 'auth',
    handler: 'auth/refresh',
    access: 'public',
    summary: 'Exchange a refresh token for a new bearer token and refresh token (rotation with reuse detection)',
    status: 200,
    request: { body: accounts.refreshBody },
    response: accounts.tokenPairResponse,
  },
  {
    id: 'X6',
    method: 'POST',
    path: '/v1/auth/logout',
    area: 'auth',
    handler: 'auth/logout',
    access: 'users',
    summary: "Revoke a refresh token's family, or every family of the caller",
    status: 200,
    request: { body: accounts.logoutBody },
    response: accounts.envelope,
  },
  {
    id: 'X2',
    method: 'POST',
    path: '/v1/admin/organisations',
    area: 'accounts',
    handler: 'orgs/create',
    access: ['SysAdmin'],
    summary: 'Create an organisation',
    status: 201,
    request: { body: accounts.createOrganisationBody },
    response: accounts.organisationView,
  },
  {
    id: 'X3',
    method: 'GET',
    path: '/v1/admin/organisations',
    area: 'accounts',
    handler: 'orgs/list',
    access: ['SysAdmin'],
    summary: 'List organisations, newest first',
    status: 200,
    request: { query: accounts.listOrganisationsQuery },
    response: accounts.organisationList,
  },
  {
    id: 'X3.read',
    method: 'GET',
    path: '/v1/admin/organisations/{orgID}',
    area: 'accounts',
    handler: 'orgs/read',
    access: ['SysAdmin'],
    summary: 'Read an organisation',
    status: 200,
    request: { params: accounts.organisationParams },
    response: accounts.organisationView,
  },
  {
    id: 'X4',
    method: 'GET',
    path: '/v1/roles',
    area: 'accounts',
    handler: 'orgs/roles',
    access: 'any',
    summary: 'List the roles and their fixed ids',
    status: 200,
    response: accounts.roleList,
  },
] as const satisfies readonly RouteDef[];

export type RouteId = (typeof routes)[number]['id'];

const byId = new Map<string, RouteDef>(routes.map((route) => [route.id, route]));

export function routeById(id: RouteId): RouteDef {
  const route = byId.get(id);
  if (!route) throw new Error(`no route ${id} in the route table`);
  return route;
}
