/**
 * Tracking links' requests and replies (contract 4.11: X27, X28, X29). X29's `tracking` is closed and holds only what
 * 4.11 lets a recipient see: no task id, no runsheet, no other stop, no proof, no address but the drop-off's city.
 */
import * as v from 'valibot';
import { FAILURE_REASONS } from '#shared/planning/schemas';
import { isoTime, objectId } from '#shared/schemas/common';

export const trackingTaskParams = v.object({ taskID: objectId });

/** A token as X27 makes them: 43 base64url characters (256 bits). Anything else cannot be one: the same 404. */
export const trackingTokenParams = v.object({ token: v.pipe(v.string(), v.maxLength(200, 'is too long')) });

export const trackingLinkReply = v.object({
  tracking: v.object({
    url: v.string(),
    /** The token's last four characters, to tell links apart without showing them. */
    token_hint: v.string(),
    expires_at: isoTime,
  }),
});

export const TRACKING_STATUSES = ['scheduled', 'on_the_way', 'delivered', 'failed', 'cancelled'] as const;
export type TrackingStatus = (typeof TRACKING_STATUSES)[number];

export const trackingReply = v.object({
  tracking: v.object({
    organisation_name: v.string(),
    task_ref: v.string(),
    status: v.picklist(TRACKING_STATUSES),
    /** The failure reason's code when `failed` (never the driver's note), else null. */
    failure_reason: v.nullable(v.picklist(FAILURE_REASONS)),
    /** The drop-off's window. */
    window: v.nullable(v.object({ start_time_utc: v.nullable(isoTime), end_time_utc: v.nullable(isoTime) })),
    /** When the driver is expected at the drop-off, to the minute; null when not reckoned (4.11). */
    eta_utc: v.nullable(isoTime),
    /** The drop-off's city, the only part of any address shown. */
    city: v.nullable(v.string()),
    driver_first_name: v.nullable(v.string()),
    /** Rounded to 3 decimals (about 100 m), only while `on_the_way`. */
    driver_position: v.nullable(v.object({ latitude: v.number(), longitude: v.number() })),
  }),
});

export const revokedReply = v.object({ code: v.literal('success'), message: v.string(), server_time: isoTime });
