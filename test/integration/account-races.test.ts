/**
 * Two account changes at once (issue 44.1): the loser's write meets users.ts's conflict, and each caller turns it
 * into what the contract says: the seeded SysAdmin is the winner's, a second A4 or A11 with the same token is gone
 * (410), a second A10 answers alike. It held before the domain threw its own errors and holds after: the catches
 * moved with the throws.
 */
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { ensureSysAdmin } = await import('../../shared/accounts/seed.ts');
const { acceptInvitation, invite } = await import('../../shared/accounts/invitations.ts');
const { createOrganisation } = await import('../../shared/accounts/organisations.ts');
const { forgotPassword, resetPassword } = await import('../../shared/accounts/password-reset.ts');
const { findUserByEmail } = await import('../../shared/accounts/users.ts');
const { localOutbox } = await import('../../shared/ports/mail.ts');
const { asProblem } = await import('../../shared/http/problems.ts');

const PASSWORD = 'a-long-enough-password';
const sysAdmin = { kind: 'user' as const, id: 'sysadmin', roles: ['SysAdmin' as const], orgId: null };
const address = (what: string) => `${what}.${Math.random().toString(36).slice(2, 10)}@example.com`;

/** One call fulfilled, the other refused with what the contract answers it (`status`, `code`); answers its detail. */
async function oneWins<T>(calls: Promise<T>[], status: number, code: string) {
  const outcomes = await Promise.allSettled(calls);
  expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
  const lost = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason;
  expect(asProblem(lost)).toMatchObject({ status, code });
  return (lost as Error).message;
}

async function invited() {
  const email = address('invited');
  const org = await createOrganisation({ name: 'Races', kind: 'platform' });
  await invite(sysAdmin, 'sysAdmin', { email, orgId: org.id });
  return { email, token: localOutbox.read(email)[0]!.data['invitation_token']! };
}

describe('two account changes at once', () => {
  it('seed one SysAdmin: the starter that loses the race answers the winner’s account', async () => {
    const email = address('admin');
    const [a, b] = await Promise.all([ensureSysAdmin(email, PASSWORD), ensureSysAdmin(email, PASSWORD)]);
    expect(a.id).toBe(b.id);
    expect((await findUserByEmail(email))?.id).toBe(a.id);
  });

  it('accept one invitation once; the second acceptance is gone', async () => {
    const { email, token } = await invited();
    const lost = await oneWins(
      [acceptInvitation(token, 'A', PASSWORD), acceptInvitation(token, 'B', PASSWORD)],
      410,
      'gone',
    );
    expect(lost).toMatch(/already used/);
    expect((await findUserByEmail(email))?.confirmed_at).not.toBeNull();
  });

  it('answer two forgotten-password requests alike, and redeem the reset token once', async () => {
    const { email, token } = await invited();
    await acceptInvitation(token, 'Reset Me', PASSWORD);
    await expect(Promise.all([forgotPassword(email), forgotPassword(email)])).resolves.toEqual([undefined, undefined]);
    const reset = localOutbox.read(email).find((m) => m.kind === 'password_reset')!.data['reset_password_token']!;
    const lost = await oneWins(
      [resetPassword(reset, `${PASSWORD}-1`), resetPassword(reset, `${PASSWORD}-2`)],
      410,
      'gone',
    );
    expect(lost).toMatch(/already used/);
  });
});
