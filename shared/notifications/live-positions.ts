/**
 * Live positions: the locations table's stream → `driver.location` events. L1 writes only the location; this runs
 * off that write (in the cloud a function on the stream with a batching window, locally the host's stream poller,
 * both through `fanOutPositions`). One batch covers a window: each driver appears once (its newest version), the
 * drivers are grouped by organisation, and each organisation costs one subscriber Query and one frame per
 * subscriber of `org.<id>` (more than one only when over 500 drivers moved: API Gateway's 128 KB message limit).
 * Freelance drivers (no organisation) go to `drivers.freelance` only (SysAdmin's).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { type LivePosition, livePositionOf } from '#shared/locations/positions';
import { logger } from '#shared/log';
import { GenerationReads, publishEvents } from '#shared/notifications/realtime';

export const FREELANCE_CHANNEL = 'drivers.freelance';
export const LOCATION_EVENT = 'driver.location';

/**
 * API Gateway refuses a WebSocket message over 128 KB. A driver is about 190 bytes of JSON, so an organisation with
 * more than this many drivers moving within one batch gets its batch as several frames (one Query still).
 */
export const MAX_DRIVERS_PER_FRAME = 500;

export const channelOfOrg = (orgId: string | null) => (orgId ? `org.${orgId}` : FREELANCE_CHANNEL);

interface Group {
  drivers: Map<string, LivePosition>;
  sequenceNumbers: string[];
}

/** Newest position per driver, grouped by channel; records that are no driver location are skipped. */
export function groupPositions(records: DynamoDBRecord[]): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const record of records) {
    const image = record.dynamodb?.NewImage;
    if (!image || record.eventName === 'REMOVE') continue;
    const live = livePositionOf(unmarshall(image as Record<string, AttributeValue>));
    if (!live) continue;
    const channel = channelOfOrg(live.orgId);
    let group = groups.get(channel);
    if (!group) {
      group = { drivers: new Map(), sequenceNumbers: [] };
      groups.set(channel, group);
    }
    const seen = group.drivers.get(live.position.user_id);
    if (!seen || seen.version < live.position.version) group.drivers.set(live.position.user_id, live.position);
    if (record.dynamodb?.SequenceNumber) group.sequenceNumbers.push(record.dynamodb.SequenceNumber);
  }
  return groups;
}

export interface FanOutStats {
  channels: number;
  drivers: number;
  frames: number;
}

/**
 * One batch of stream records → one frame per subscriber per channel. A channel whose delivery fails reports its
 * records as failed (partial batch response), so the stream retries from the first of them.
 */
export async function fanOutPositions(event: DynamoDBStreamEvent, stats?: FanOutStats): Promise<DynamoDBBatchResponse> {
  const groups = groupPositions(event.Records ?? []);
  const failed: string[] = [];
  // Each subscriber's token generation is read once per batch, whatever the number of channels it is on.
  const reads = new GenerationReads();
  await Promise.all(
    [...groups].map(async ([channel, group]) => {
      try {
        const drivers = [...group.drivers.values()];
        const payloads = [];
        for (let i = 0; i < drivers.length; i += MAX_DRIVERS_PER_FRAME) {
          const part = drivers.slice(i, i + MAX_DRIVERS_PER_FRAME);
          // A retried batch carries the same positions, so the same frame ids.
          payloads.push({
            key: part.map((d) => `${d.user_id}@${d.version}`).join(','),
            data: { drivers: part },
          });
        }
        const { delivered } = await publishEvents(channel, LOCATION_EVENT, payloads, reads);
        if (stats) {
          stats.channels++;
          stats.drivers += drivers.length;
          stats.frames += delivered;
        }
      } catch (error) {
        logger.error('live positions not delivered; the batch retries from these records', {
          channel,
          error: error as Error,
        });
        failed.push(...group.sequenceNumbers);
      }
    }),
  );
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
}
