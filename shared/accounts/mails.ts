/** The text of every mail the accounts area sends: plain text a person can act on. */
import type { Mail } from '#shared/ports/mail';
import { mail } from '#shared/ports/mailer';

const APP_URL = () => process.env['DISPATCH_APP_URL'] ?? 'https://app.dispatch.example';

export function sendInvitation(to: string, token: string, organisationName: string) {
  return mail().send({
    to,
    kind: 'invitation',
    subject: `You are invited to ${organisationName} on Dispatch`,
    text: `You have been invited to join ${organisationName} on Dispatch.

Accept the invitation within 7 days: ${APP_URL()}/accept-invitation?token=${token}
(or send this token with your name and a password to POST /v1/auth/accept-invitation: ${token})

If you did not expect this, ignore this mail.`,
    data: { invitation_token: token },
  });
}

export function sendPasswordReset(to: string, token: string) {
  return mail().send({
    to,
    kind: 'password_reset',
    subject: 'Reset your Dispatch password',
    text: `Somebody asked to reset the password of this Dispatch account.

Choose a new password within one hour: ${APP_URL()}/reset-password?token=${token}
(or send this token with the new password to POST /v1/auth/password/reset: ${token})

If it was not you, ignore this mail; your password stays as it is.`,
    data: { reset_password_token: token },
  });
}

export function sendSecurityCode(to: string, code: string) {
  return mail().send({
    to,
    kind: 'security_code',
    subject: `Your Dispatch security code: ${code}`,
    text: `Your security code is ${code}. It is valid for 10 minutes and can be used once.

If you did not ask for it, ignore this mail.`,
    data: { security_code: code },
  });
}

/** The welcome goes through the outbox (shared/accounts/outbox.ts): the registration it follows is not repeatable. */
export function welcomeMail(to: string, name: string): Mail {
  return {
    to,
    kind: 'welcome',
    subject: 'Welcome to Dispatch',
    text: `Hello ${name},

your Dispatch account is registered. Ask for a security code (POST /v1/auth/security-code) and confirm it
(POST /v1/auth/verify-security-code) to activate the account, then log in.`,
    data: {},
  };
}

/** Told to the old address of an A22 change, through the outbox: the change it follows is done. */
export function emailChangedMail(to: string, newEmail: string): Mail {
  return {
    to,
    kind: 'email_changed',
    subject: 'The email address of your Dispatch account was changed',
    text: `The email address of the Dispatch account that used ${to} was changed to ${newEmail}.

If it was you, nothing is left to do here: confirm the new address with a security code (POST /v1/auth/security-code,
then POST /v1/auth/verify-security-code) before you log in again.
If it was not you, your password is known to someone else: contact your organisation's administrator at once.`,
    data: { new_email: newEmail },
  };
}
