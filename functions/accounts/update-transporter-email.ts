// A22 PUT /v1/transporter/me/email
import { updateTransporterEmail } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A22', async ({ body, caller }) => {
  const { confirm } = await updateTransporterEmail(caller, body.user.user);
  return success(
    confirm
      ? 'the email is updated; confirm the new address (POST /v1/auth/security-code, then /v1/auth/verify-security-code) before you log in again'
      : 'the email is updated',
  );
});
