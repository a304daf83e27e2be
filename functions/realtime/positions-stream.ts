// The locations table's stream (one batch a window: shared/notifications/positions-window.ts): `driver.location`
// frames to `org.<id>` and `drivers.freelance`.
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { fanOutPositions } from '#shared/notifications/live-positions';

export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => fanOutPositions(event);
