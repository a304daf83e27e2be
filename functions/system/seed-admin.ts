// Runs once after each deployment (a CDK Trigger): creates the SysAdmin named by configuration if it does not exist.
import { ensureSysAdmin } from '#shared/accounts/seed';
import { wire } from '#shared/aws/wire';

export const handler = async (): Promise<{ seeded: string }> => {
  const email = process.env['DISPATCH_ADMIN_EMAIL'];
  const secretId = process.env['ADMIN_PASSWORD_SECRET_ARN'];
  if (!email || !secretId) throw new Error('DISPATCH_ADMIN_EMAIL and ADMIN_PASSWORD_SECRET_ARN are required');
  // Loaded here, not at module scope: the runtime ships it and only this one call needs it.
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const password = (await new SecretsManagerClient(wire()).send(new GetSecretValueCommand({ SecretId: secretId })))
    .SecretString;
  if (!password) throw new Error('the admin password secret is empty');
  const admin = await ensureSysAdmin(email, password);
  return { seeded: admin.id };
};
