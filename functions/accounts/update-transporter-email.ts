// A22 PUT /v1/transporter/me/email
import { updateTransporterEmail } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A22', async ({ body, caller }) => {
  await updateTransporterEmail(caller, body.user.user.email);
  return success('the email is updated');
});
