/**
 * The location item's key: an organisation's drivers share one partition key (`LOCS#<org>`, the driver id the sort
 * key), so their writes ride one partition and one stream shard (one frame per batch window per dispatcher, however
 * many shards the stream has; dynoxide's stream has one shard, so the layout is what is tested here). A freelance
 * driver keeps `LOC#<driver> / CURRENT`. A25 moves the item in the same transaction as the user's change; a token
 * minted before the move writes under the new key, never the old one; a fix stored during the move is not lost.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { authenticate } from '../../shared/auth/authorizer.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { db, locationsTableName, mainTableName, transactWrite } from '../../shared/db/client.ts';
import { importLocations, locationAt, recordFix } from '../../shared/locations/fixes.ts';
import { locationKey, organisationMove } from '../../shared/locations/locations.ts';
import { type Client, client, freelanceDriver, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { withMiddleware } from '../support/middleware.ts';

let host: RunningHost;
let api: Client;
let admin: string;

type Location = { user_id: string; latitude: number; longitude: number; version: number };

const fix = (latitude: number, longitude: number, secondsAgo = 0) => ({
  latitude,
  longitude,
  client_time_utc: new Date(Date.now() - secondsAgo * 1000).toISOString(),
});

const stored = async (driverId: string, orgId: string | null) =>
  (await db().send(new GetCommand({ TableName: locationsTableName(), Key: locationKey(driverId, orgId) }))).Item;

const newFreelanceDriver = () => freelanceDriver(api, 'orgkey');

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
});
afterAll(() => host?.stop());

describe('the location item key', () => {
  it("puts an organisation's drivers under one partition key and a freelance driver under its own; every reader finds them", async () => {
    const org = await newOrganisation(api, admin, 'One shard');
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const drivers = [];
    for (const [i, latitude] of [1.3, 1.301, 1.302].entries()) {
      const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
      expect((await api.put('/v1/driver/location', fix(latitude, 103.8, 5 - i), driver.token)).status).toBe(200);
      drivers.push(driver);
    }
    const freelancer = await newFreelanceDriver();
    expect((await api.put('/v1/driver/location', fix(1.303, 103.8), freelancer.bearer_token)).status).toBe(200);

    const partition = await db().send(
      new QueryCommand({
        TableName: locationsTableName(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `LOCS#${org}` },
      }),
    );
    expect((partition.Items ?? []).map((item) => item['SK']).sort()).toEqual(drivers.map((d) => d.id).sort());
    expect((partition.Items ?? []).every((item) => item['org_id'] === org)).toBe(true);
    for (const driver of drivers) expect(await stored(driver.id, null)).toBeUndefined();
    expect((await stored(freelancer.user.id, null))?.['org_id']).toBeNull();

    // L2: the organisation's dispatcher, SysAdmin (the driver's profile names its organisation), the driver itself.
    for (const token of [dispatcher.token, admin, drivers[0]!.token]) {
      const read = await api.get<{ location: Location }>(`/v1/driver-locations/${drivers[0]!.id}`, token);
      expect(read.status).toBe(200);
      expect(read.body.location.latitude).toBe(1.3);
    }
    const own = await api.get<{ location: Location }>(
      `/v1/driver-locations/${freelancer.user.id}`,
      freelancer.bearer_token,
    );
    expect(own.body.location.latitude).toBe(1.303);
    expect((await api.get(`/v1/driver-locations/${freelancer.user.id}`, admin)).status).toBe(200);
    expect((await api.get(`/v1/driver-locations/${freelancer.user.id}`, dispatcher.token)).status).toBe(404);
    // L4 and L3: the candidates' items are read under their organisation's key.
    const within = await api.get<{ locations: Location[] }>(
      '/v1/driver-locations?latitude=1.3&longitude=103.8&radius=1000',
      dispatcher.token,
    );
    expect(within.body.locations.map((l) => l.user_id)).toEqual(drivers.map((d) => d.id));
    const everyone = await api.get<{ locations: Location[] }>(
      '/v1/driver-locations?latitude=1.3&longitude=103.8&radius=1000',
      admin,
    );
    expect(everyone.body.locations.map((l) => l.user_id)).toEqual(
      expect.arrayContaining([...drivers.map((d) => d.id), freelancer.user.id]),
    );
    const nearest = await api.get<{ location: Location }>(
      '/v1/driver-locations/nearest?latitude=1.3021&longitude=103.8',
      dispatcher.token,
    );
    expect(nearest.body.location.user_id).toBe(drivers[2]!.id);
  });

  it('moves the item on A25; a token minted before the move writes under the new key, never the old one', async () => {
    const org = await newOrganisation(api, admin, 'Joined');
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const freelancer = await newFreelanceDriver();
    const id = freelancer.user.id;
    expect((await api.put('/v1/driver/location', fix(-33.86, 151.21, 30), freelancer.bearer_token)).status).toBe(200);
    const before = await stored(id, null);
    expect(before?.['version']).toBe(1);
    expect((await api.get(`/v1/driver-locations/${id}`, dispatcher.token)).status).toBe(404);

    const assigned = await api.post('/v1/admin/users/assign-organisation', { user: { id, org_id: org } }, admin);
    expect(assigned.status).toBe(200);
    expect(await stored(id, null)).toBeUndefined();
    const moved = await stored(id, org);
    expect(moved).toMatchObject({ org_id: org, user_id: id, version: 1, latitude: -33.86, longitude: 151.21 });
    expect(moved?.['GEO_SK']).toBe(before?.['GEO_SK']);
    const read = await api.get<{ location: Location }>(`/v1/driver-locations/${id}`, dispatcher.token);
    expect(read.status).toBe(200);
    expect(read.body.location.latitude).toBe(-33.86);

    // The driver's token still says no organisation: the fix is stored under the organisation's key all the same.
    const stale = await api.put('/v1/driver/location', fix(-33.861, 151.21, 10), freelancer.bearer_token);
    expect(stale.status).toBe(200);
    expect(await stored(id, null)).toBeUndefined();
    expect(await stored(id, org)).toMatchObject({ org_id: org, version: 2, latitude: -33.861 });
    const batch = await api.post<{ accepted: number }>(
      '/v1/driver/locations',
      { fixes: [fix(-33.862, 151.21, 5)] },
      freelancer.bearer_token,
    );
    expect(batch.body.accepted).toBe(1);
    expect(await stored(id, null)).toBeUndefined();
    expect(await stored(id, org)).toMatchObject({ version: 3, latitude: -33.862 });
    const self = await api.get<{ location: Location }>(`/v1/driver-locations/${id}`, freelancer.bearer_token);
    expect(self.body.location.version).toBe(3);
    const sysadmin = await api.get<{ location: Location }>(`/v1/driver-locations/${id}`, admin);
    expect(sysadmin.body.location.version).toBe(3);
  });

  it('an A25 committed between a first fix’s read of the profile and its write: the fix goes under the new key', async () => {
    const org = await newOrganisation(api, admin, 'Joined mid-fix');
    const freelancer = await newFreelanceDriver();
    const id = freelancer.user.id;
    // The driver has no location yet: its first fix reads the profile (no organisation), then writes. Just before
    // that write, the profile joins the organisation (what A25's transaction commits when there is no item to move).
    let joined = false;
    const writesLocation = (input: Record<string, unknown>) => {
      type Write = { TableName?: string; Item?: object };
      const transact = input['TransactItems'] as { Put?: Write }[] | undefined;
      const writes: Write[] = transact ? transact.flatMap((item) => (item.Put ? [item.Put] : [])) : [input as Write];
      return writes.some((write) => write.TableName === locationsTableName() && write.Item !== undefined);
    };
    // The domain call in this process (the host loads its functions as separate modules, with their own client).
    const caller = (await authenticate(`Bearer ${freelancer.bearer_token}`))!;
    const stored1 = await withMiddleware(
      'a25-mid-fix',
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        const name = context.commandName ?? '';
        if (!joined && (name === 'TransactWriteItemsCommand' || name === 'PutItemCommand') && writesLocation(input)) {
          joined = true;
          await db().send(
            new UpdateCommand({
              TableName: mainTableName(),
              Key: { PK: `USER#${id}`, SK: 'PROFILE' },
              UpdateExpression: 'SET org_id = :org',
              ExpressionAttributeValues: { ':org': org },
            }),
          );
        }
        return next(args);
      },
      () => recordFix(caller, fix(35.68, 139.76)),
    );
    expect(joined).toBe(true);
    expect(stored1).toBe(true);
    // Never an item under the freelance key the profile no longer names: the organisation sees the driver.
    expect(await stored(id, null)).toBeUndefined();
    expect(await stored(id, org)).toMatchObject({ version: 1, latitude: 35.68, org_id: org });
  });

  it('L3 answers when a driver has items under two keys (a stray item the index lists beside the real one)', {
    timeout: 30_000,
  }, async () => {
    const org = await newOrganisation(api, admin, 'Two keys');
    const freelancer = await newFreelanceDriver();
    const id = freelancer.user.id;
    // The real item, 3.2 km east of the search point, moved into the organisation by A25.
    expect((await api.put('/v1/driver/location', fix(-54.8, -68.25, 5), freelancer.bearer_token)).status).toBe(200);
    expect((await api.post('/v1/admin/users/assign-organisation', { user: { id, org_id: org } }, admin)).status).toBe(
      200,
    );
    // A stray item under the freelance key, 130 m from the point (what an old race could leave).
    await importLocations([locationAt(id, { latitude: -54.8, longitude: -68.298 })]);
    const nearest = await api.get<{ location: Location }>(
      '/v1/driver-locations/nearest?latitude=-54.8&longitude=-68.3',
      admin,
    );
    expect(nearest.status).toBe(200);
    expect(nearest.body.location).toMatchObject({ user_id: id, longitude: -68.298 });
    // The organisation's own search sees its item only.
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const own = await api.get<{ location: Location }>(
      '/v1/driver-locations/nearest?latitude=-54.8&longitude=-68.3',
      dispatcher.token,
    );
    expect(own.body.location).toMatchObject({ user_id: id, longitude: -68.25 });
  });

  it('a fix stored between the move’s read and its transaction cancels the move: the fix is not lost', async () => {
    const org = await newOrganisation(api, admin, 'Raced');
    const freelancer = await newFreelanceDriver();
    const id = freelancer.user.id;
    expect((await api.put('/v1/driver/location', fix(48.85, 2.35, 30), freelancer.bearer_token)).status).toBe(200);
    const move = await organisationMove(id, null, org, undefined);
    expect((await api.put('/v1/driver/location', fix(48.851, 2.35, 10), freelancer.bearer_token)).status).toBe(200);
    await expect(transactWrite(move)).rejects.toThrow();
    expect(await stored(id, org)).toBeUndefined();
    expect(await stored(id, null)).toMatchObject({ version: 2, latitude: 48.851 });
    // A25 reads again and moves the newer fix.
    expect((await api.post('/v1/admin/users/assign-organisation', { user: { id, org_id: org } }, admin)).status).toBe(
      200,
    );
    expect(await stored(id, null)).toBeUndefined();
    expect(await stored(id, org)).toMatchObject({ version: 2, latitude: 48.851, org_id: org });
  });
});
