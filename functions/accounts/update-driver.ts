// A21 PUT /v1/driver/me
import { updateDriver } from '#shared/accounts/profiles';
import { endpoint } from '#shared/http/endpoint';
import { success } from '#shared/http/responses';
import { accountsRoutes } from '#shared/routes/accounts';

export const handler = endpoint(accountsRoutes, 'A21', async ({ body, caller }) => {
  const driverProfile = await updateDriver(caller, body.user.user);
  return success('the driver profile is updated', { driver_profile: driverProfile });
});
