/**
 * Reading and administering users: the lists (A14, A15, A19), single reads (A16, A18, A23, X9), and the SysAdmin's
 * changes (A17 delete, A25 assign organisation, A26 confirm). Every list is a Query on an index; totals and the
 * versions that keep deep page numbers cheap come from maintained counters.
 */

import { requireOrganisation } from '#shared/accounts/organisations';
import {
  ALL_USERS,
  findUserByEmail,
  getUser,
  orgRoleScope,
  orgUsersScope,
  toDriverProfileView,
  toRecord,
  toUserView,
  type UserRecord,
  updateUser,
  userListing,
  userShards,
  usersByPrefix,
} from '#shared/accounts/users';
import { type Caller, isSysAdmin } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { mainTableName } from '#shared/db/client';
import { decodePageToken, encodePageToken, type PageRequest, queryMergedPage, queryPage } from '#shared/db/paging';
import { conflict, forbidden, invalidAt, isDomainError, notFound } from '#shared/errors';
import { organisationMove } from '#shared/locations/locations';

/** A user the caller may see: SysAdmin any, everybody else only users of their own organisation; else 404. */
export async function findVisibleUser(caller: Caller, id: string, options: { includeDeleted?: boolean } = {}) {
  const user = await getUser(id);
  if (!user || (user.deleted_at && !options.includeDeleted)) throw notFound('user');
  if (isSysAdmin(caller)) return user;
  if (caller.orgId && user.org_id === caller.orgId) return user;
  throw notFound('user');
}

export function toListedUser(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    created_at: user.created_at,
    updated_at: user.updated_at,
    org_id: user.org_id,
    roles: user.roles,
    ...(user.driver_profile
      ? { driver_profile: toDriverProfileView({ ...user, driver_profile: user.driver_profile }) }
      : {}),
  };
}

const newestFirst = (index: string, partition: string) => ({
  TableName: mainTableName(),
  IndexName: index,
  KeyConditionExpression: '#pk = :pk',
  ExpressionAttributeNames: { '#pk': `${index}PK` },
  ExpressionAttributeValues: { ':pk': partition },
  ScanIndexForward: false,
});

/** Search reads at most this many matches per key (email prefix, name prefix). */
export const SEARCH_LIMIT = 1000;

/** A14. */
export async function listUsers(query: { orgId?: string | undefined; search?: string | undefined }, page: PageRequest) {
  if (query.orgId) await requireOrganisation(query.orgId, 'query.org_id');
  if (query.search) return searchUsers(query.search, query.orgId, page);
  const scope = query.orgId ? orgUsersScope(query.orgId) : ALL_USERS;
  const listing = await userListing(scope);
  const found = query.orgId
    ? await queryPage(newestFirst('GSI1', scope), page, toRecord, listing)
    : await queryMergedPage(userShards, newestFirst('GSI2', ALL_USERS), page, toRecord);
  return { users: found.items.map(toListedUser), meta: { ...found.meta, total: listing.count } };
}

/** Case-insensitive prefix of the email or the name, newest first; bounded to SEARCH_LIMIT matches a key. */
async function searchUsers(term: string, orgId: string | undefined, page: PageRequest) {
  const [byEmail, byName] = await Promise.all([
    usersByPrefix('GSI3', term, SEARCH_LIMIT),
    usersByPrefix('GSI4', term, SEARCH_LIMIT),
  ]);
  const unique = new Map<string, UserRecord>();
  for (const user of [...byEmail, ...byName]) if (!orgId || user.org_id === orgId) unique.set(user.id, user);
  const matches = [...unique.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
  let pageNumber = page.page;
  if (page.pageToken) {
    const decoded = decodePageToken(page.pageToken);
    if (decoded.key['search'] !== term) throw invalidAt('query.page_token', 'is not a token this service issued');
    pageNumber = decoded.page;
  }
  const start = (pageNumber - 1) * page.perPage;
  const slice = matches.slice(start, start + page.perPage);
  const more = start + page.perPage < matches.length;
  return {
    users: slice.map(toListedUser),
    meta: {
      page: pageNumber,
      per_page: page.perPage,
      next_page_token: more ? encodePageToken({ search: term }, pageNumber + 1) : null,
      total: matches.length,
    },
  };
}

const SORT_INDEX = { name: 'GSI5', email: 'GSI6', created_at: 'GSI7' } as const;

/** A15: an organisation's users of one role, sorted by name, email or creation. */
export async function listUsersByRole(
  query: { orgId: string; role: string; sortBy: keyof typeof SORT_INDEX; order: 'asc' | 'desc' },
  page: PageRequest,
) {
  await requireOrganisation(query.orgId, 'query.org_id');
  const index = SORT_INDEX[query.sortBy];
  const scope = orgRoleScope(query.orgId, query.role);
  const listing = await userListing(scope);
  const found = await queryPage(
    { ...newestFirst(index, scope), ScanIndexForward: query.order === 'asc' },
    page,
    toRecord,
    listing,
  );
  const total = listing.count;
  const totalPages = Math.ceil(total / page.perPage);
  return {
    users: found.items.map((user) => {
      const { roles, ...listed } = toListedUser(user);
      return {
        ...listed,
        roles_name: roles,
        confirmed_at: user.confirmed_at,
        // Invitation tokens are stored hashed and cannot be read back; the status says whether one is pending.
        invitation_token: null,
        invitation_status: user.invitation_token_hash ? ('pending' as const) : null,
      };
    }),
    meta: {
      ...found.meta,
      total,
      total_records: total,
      total_pages: totalPages,
      has_next: found.meta.page < totalPages,
      has_previous: found.meta.page > 1,
    },
  };
}

/** A19: the caller's own organisation. */
export async function listOrganisationUsers(caller: Caller, page: PageRequest) {
  if (!caller.orgId) throw forbidden('your account belongs to no organisation');
  const listing = await userListing(orgUsersScope(caller.orgId));
  const found = await queryPage(newestFirst('GSI1', listing.scope), page, toRecord, listing);
  return { users: found.items.map(toListedUser), meta: { ...found.meta, total: listing.count } };
}

/** A16 (reads deleted users too) and A18. */
export async function readUser(id: string) {
  const user = await getUser(id);
  if (!user) throw notFound('user');
  return toUserView(user);
}

export async function readUserByEmail(email: string) {
  const user = await findUserByEmail(email);
  if (!user) throw notFound('user');
  return toUserView(user);
}

/** A23. */
export async function readOrganisationUser(caller: Caller, id: string) {
  const user = await findVisibleUser(caller, id);
  const { id: userId, email, name, roles, org_id, driver_profile } = toUserView(user);
  return { user: { id: userId, email, name, roles, org_id, ...(driver_profile ? { driver_profile } : {}) } };
}

/**
 * A17: the email becomes `deleted-<epoch ms>-<email>` (freeing the address), `deleted_at` is set, and the token
 * generation moves on, which revokes every refresh family and, within the authorizer's cache, every bearer token.
 */
export async function deleteUser(email: string): Promise<void> {
  const user = await findUserByEmail(email);
  if (!user || user.deleted_at) throw notFound('user');
  await updateUser(user, {
    email: `deleted-${clock.nowMs()}-${user.email}`,
    deleted_at: clock.nowIso(),
    token_gen: user.token_gen + 1,
    invitation_token_hash: null,
    reset_token_hash: null,
  });
}

/** A25. */
export async function assignOrganisation(userId: string, orgId: string): Promise<void> {
  const user = await getUser(userId);
  if (!user || user.deleted_at) throw invalidAt('user.id', 'names no user');
  await requireOrganisation(orgId, 'user.org_id');
  if (user.org_id) throw conflict('the user already belongs to an organisation');
  // The driver's location moves to the organisation's key in the same transaction as the user's change (the profile
  // and the item's key never disagree: shared/locations/fixes.ts, recordFix). A fix stored between the location's
  // read and the transaction cancels it: read both again.
  for (let attempt = 0; ; attempt++) {
    const current = attempt === 0 ? user : await getUser(userId);
    if (!current || current.deleted_at) throw invalidAt('user.id', 'names no user');
    if (current.org_id) throw conflict('the user already belongs to an organisation');
    try {
      const move = await organisationMove(userId, null, orgId, current.driver_profile?.service_types);
      await updateUser(current, { org_id: orgId }, move);
      return;
    } catch (error) {
      if (attempt >= 2 || !isDomainError(error, 'conflict')) throw error;
    }
  }
}

/** A26. */
export async function confirmUser(userId: string): Promise<void> {
  const user = await getUser(userId);
  if (!user || user.deleted_at) throw notFound('user');
  if (user.confirmed_at) throw conflict('the user is already confirmed');
  await updateUser(user, { confirmed_at: clock.nowIso() });
}
