/**
 * The OpenAPI document's explanations (issue 24 item 2): each operation's description, request example, extra error
 * statuses and request field descriptions, keyed by route id. Only lib/openapi.ts reads them: they stay out of every
 * Lambda bundle (test/unit/openapi-docs.test.ts checks that no file under shared/ or functions/ imports this folder).
 */
import { accountsDocs } from '#lib/openapi-docs/accounts';
import { authDocs } from '#lib/openapi-docs/auth';
import { importsDocs } from '#lib/openapi-docs/imports';
import { locationsDocs } from '#lib/openapi-docs/locations';
import { notificationsDocs } from '#lib/openapi-docs/notifications';
import { planningDocs } from '#lib/openapi-docs/planning';
import { routingDocs } from '#lib/openapi-docs/routing';
import { tokensDocs } from '#lib/openapi-docs/tokens';
import type { AreaDocs, OperationDocs } from '#lib/openapi-docs/types';

export { COMMON_FIELDS, perPageDescription } from '#lib/openapi-docs/common';
export { EXAMPLE } from '#lib/openapi-docs/examples';
export type { AreaDocs, OperationDocs } from '#lib/openapi-docs/types';

export const OPERATION_DOCS: AreaDocs = {
  ...accountsDocs,
  ...authDocs,
  ...importsDocs,
  ...locationsDocs,
  ...notificationsDocs,
  ...planningDocs,
  ...routingDocs,
  ...tokensDocs,
};

/** The route's docs (undefined for a route nobody documented yet: the unit test fails on it). */
export const docsOf = (id: string): OperationDocs | undefined => OPERATION_DOCS[id];
