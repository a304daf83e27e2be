/** The stream batch → per-channel driver lists: newest version per driver, grouped by organisation, nothing else. */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { locationKey } from '../../shared/locations/locations.ts';
import { groupPositions } from '../../shared/notifications/live-positions.ts';

const ORG_A = '11111111-1111-4111-8111-111111111111';
const ORG_B = '22222222-2222-4222-8222-222222222222';
let sequence = 0;

const record = (
  item: Record<string, unknown>,
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'MODIFY',
): DynamoDBRecord => ({
  eventName,
  dynamodb: {
    SequenceNumber: String(++sequence),
    NewImage: marshall(item, { removeUndefinedValues: true }) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
  },
});

const location = (userId: string, orgId: string | null, version: number, extra: Record<string, unknown> = {}) => ({
  ...locationKey(userId, orgId),
  GEO_PK: 'w21z7#2',
  GEO_SK: `w21z7abcd#${userId}`,
  cell: 'w21z7',
  entity: 'location',
  id: `fix${version}`,
  user_id: userId,
  device_id: 'phone',
  latitude: 1.3 + version / 1000,
  longitude: 103.8,
  altitude: null,
  client_time_utc: `2026-11-22T10:00:0${version}.000Z`,
  client_timezone: null,
  server_time: `2026-11-22T10:00:0${version}.500Z`,
  version,
  org_id: orgId,
  service_types: ['bike'],
  ...extra,
});

describe('groupPositions', () => {
  it('keeps each driver once at its newest version, per organisation channel, freelance apart', () => {
    const groups = groupPositions([
      record(location('a1', ORG_A, 2)),
      record(location('a1', ORG_A, 4)),
      record(location('a1', ORG_A, 3)),
      record(location('a2', ORG_A, 1), 'INSERT'),
      record(location('b1', ORG_B, 7, { geo_cell: 'w21z7', some_future_attribute: { nested: true } })),
      record(location('f1', null, 1)),
      record({ PK: 'CELLS#ALL', SK: 'w21', n: 3 }),
      record(location('gone', ORG_A, 9), 'REMOVE'),
    ]);
    expect([...groups.keys()].sort()).toEqual(['drivers.freelance', `org.${ORG_A}`, `org.${ORG_B}`]);
    const a = [...groups.get(`org.${ORG_A}`)!.drivers.values()];
    expect(a.map((d) => [d.user_id, d.version])).toEqual([
      ['a1', 4],
      ['a2', 1],
    ]);
    expect(a[0]).toEqual({
      user_id: 'a1',
      latitude: 1.304,
      longitude: 103.8,
      altitude: null,
      client_time_utc: '2026-11-22T10:00:04.000Z',
      server_time: '2026-11-22T10:00:04.500Z',
      version: 4,
    });
    expect(groups.get(`org.${ORG_A}`)!.sequenceNumbers).toHaveLength(4);
    expect([...groups.get(`org.${ORG_B}`)!.drivers.keys()]).toEqual(['b1']);
    expect([...groups.get('drivers.freelance')!.drivers.keys()]).toEqual(['f1']);
  });
});
