/** The shape of a route-table entry (shared by the per-area tables and everything that reads them). */

import type { GenericSchema } from 'valibot';
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
  /** Unique: the spec's operation number (A1 … R8), an X/system id, or `<number>.<variant>` for a second path. */
  id: string;
  /** The spec's number when `id` names a variant (I1.ops is the spec's I1 for operations staff). */
  specId?: string;
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
    /** Lower-cased header names; failures name `header.<name>`. */
    headers?: GenericSchema;
    body?: GenericSchema;
    /** Also accept `application/x-www-form-urlencoded` bodies (the OAuth-style token endpoint). */
    acceptsForm?: boolean;
  };
  /** The success body (JSON). */
  response?: GenericSchema;
  /**
   * For the one operation that answers in its own way (I8): what the document says of it, since the handler reads
   * its query itself to keep the spec's `{"Error": …}` failures. `bytes`: success is the file itself.
   */
  documented?: { query?: GenericSchema; bytes?: boolean; failure?: GenericSchema; redirect?: boolean };
}
