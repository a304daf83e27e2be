/**
 * Roles of contract section 3. Role ids are fixed UUIDs so that every deployment, and every test, agrees on them.
 */
export const ROLES = {
  SysAdmin: 'b0e5c3a1-0001-4000-8000-000000000001',
  OrgAdmin: 'b0e5c3a1-0002-4000-8000-000000000002',
  OrgDriver: 'b0e5c3a1-0003-4000-8000-000000000003',
  OrgTransporter: 'b0e5c3a1-0004-4000-8000-000000000004',
  Driver: 'b0e5c3a1-0005-4000-8000-000000000005',
  Transporter: 'b0e5c3a1-0006-4000-8000-000000000006',
  Merchant: 'b0e5c3a1-0007-4000-8000-000000000007',
  Partner: 'b0e5c3a1-0008-4000-8000-000000000008',
  RRTB: 'b0e5c3a1-0009-4000-8000-000000000009',
  PriceAdjustment: 'b0e5c3a1-000a-4000-8000-00000000000a',
  RunsheetBroadcastRecordWorker: 'b0e5c3a1-000b-4000-8000-00000000000b',
  RunsheetBroadcastPlanWorker: 'b0e5c3a1-000c-4000-8000-00000000000c',
  ImportWorker: 'b0e5c3a1-000d-4000-8000-00000000000d',
} as const;

export type Role = keyof typeof ROLES;
export const ROLE_NAMES = Object.keys(ROLES) as Role[];

/** Roles that only internal worker clients carry (X7), never a user. */
export const INTERNAL_ROLES = [
  'RunsheetBroadcastRecordWorker',
  'RunsheetBroadcastPlanWorker',
  'RRTB',
  'PriceAdjustment',
  'ImportWorker',
] as const satisfies readonly Role[];

/** Where the spec says "Driver" it means both kinds of driver; likewise "Transporter". */
export const DRIVERS = ['Driver', 'OrgDriver'] as const satisfies readonly Role[];
export const TRANSPORTERS = ['Transporter', 'OrgTransporter'] as const satisfies readonly Role[];

export const isRole = (name: string): name is Role => Object.hasOwn(ROLES, name);

export function roleByName(name: string): { id: string; name: Role } | undefined {
  return isRole(name) ? { id: ROLES[name], name } : undefined;
}

export function roleById(id: string): { id: string; name: Role } | undefined {
  const name = ROLE_NAMES.find((role) => ROLES[role] === id);
  return name ? { id, name } : undefined;
}

/**
 * A partner's scopes (contract section 3), granted by a SysAdmin at T3/T5 and carried in the partner's bearer token
 * (`scope`, space-separated): each opens the operations whose route names it (shared/routes/*.ts `scopes`), where the
 * partner then answers as an OrgAdmin of its organisation would. docs/accounts.md, "Partner scopes" lists what each opens.
 */
export const PARTNER_SCOPES = ['users:invite', 'imports', 'plannings', 'locations:read'] as const;
export type Scope = (typeof PARTNER_SCOPES)[number];
/** What a partner holds when T3 names no scopes (and what a partner stored before scopes existed holds). */
export const DEFAULT_PARTNER_SCOPES: readonly Scope[] = ['users:invite'];

export const isScope = (name: string): name is Scope => (PARTNER_SCOPES as readonly string[]).includes(name);

/**
 * Who may call. `public`: no token. `any`: any verified token, user or client. `users`: any user token
 * (partner and internal client tokens get 403). A role list: the caller must hold one of them.
 * Finer rules (own organisation, the paired driver) live in the domain functions.
 */
export type Access = 'public' | 'any' | 'users' | readonly Role[];
