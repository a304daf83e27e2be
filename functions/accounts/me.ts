// X9 GET /v1/me
import { me } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { ok } from '#shared/http/responses';

export const handler = endpoint('X9', async ({ caller }) => ok(await me(caller)));
