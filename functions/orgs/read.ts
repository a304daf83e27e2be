// X3 GET /v1/admin/organisations/{orgID}
import { getOrganisation } from '#shared/accounts/organisations';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';

export const handler = endpoint('X3.read', async ({ params }) => ok(await getOrganisation(params.orgID)));
