/** A9 with a partner caller (client credentials arrive with issue 4; the authorizer's context is built here). */
import { describe, expect, it } from 'vitest';
import { invoke } from '../support/invoke.ts';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { createOrganisation } = await import('../../shared/accounts/organisations.ts');
const { findUserByEmail } = await import('../../shared/accounts/users.ts');
const { ROLES } = await import('../../shared/auth/roles.ts');
const invitePartner = (await import('../../functions/accounts/invite-partner.ts')).handler;

describe('A9 partner invitations', () => {
  it('invite into the partner’s own organisation only, as OrgDriver only (issue 42 item 1)', async () => {
    const own = await createOrganisation({ name: 'Platform', kind: 'platform' });
    const other = await createOrganisation({ name: 'Other', kind: 'platform' });
    const partner = { kind: 'client' as const, id: 'partner-client-1', roles: ['Partner' as const], orgId: own.id };
    const invited = await invoke(invitePartner, {
      body: { user: { email: 'child@partner.example', org_id: own.id, role_id: ROLES.OrgDriver } },
      caller: partner,
    });
    expect(invited).toMatchObject({ status: 201, body: { status: 'invited' } });
    expect(await findUserByEmail('child@partner.example')).toMatchObject({
      org_id: own.id,
      roles: ['OrgDriver'],
      confirmed_at: null,
    });
    // Any role above OrgDriver is more than a partner holds: refused, and nobody is stored.
    const transporter = await invoke(invitePartner, {
      body: { user: { email: 'z@partner.example', org_id: own.id, role_id: ROLES.OrgTransporter } },
      caller: partner,
    });
    expect(transporter).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await findUserByEmail('z@partner.example')).toBeUndefined();

    const elsewhere = await invoke(invitePartner, {
      body: { user: { email: 'x@partner.example', org_id: other.id } },
      caller: partner,
    });
    expect(elsewhere).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    const sysAdminRole = await invoke(invitePartner, {
      body: { user: { email: 'y@partner.example', org_id: own.id, role_id: ROLES.SysAdmin } },
      caller: partner,
    });
    expect(sysAdminRole.status).toBe(403);
    expect(await findUserByEmail('x@partner.example')).toBeUndefined();
  });
});
