// A22 PUT /v1/transporter/me/email
import { updateTransporterEmail } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';

export const handler = endpoint('A22', async ({ body, caller }) => {
  await updateTransporterEmail(caller, body.user.user.email);
  return success('the email is updated');
});
