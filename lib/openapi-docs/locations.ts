/** The locations area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

export const locationsDocs: AreaDocs = {
  L1: {
    description:
      'Stores the calling driver’s current position (WGS 84 degrees). A fix older than the stored one is ' +
      'ignored (still 200); live subscribers of the driver’s organisation are told.',
    example: {
      body: {
        latitude: 1.2765,
        longitude: 103.846,
        altitude: 15,
        device_id: 'pixel-7-3f9a',
        client_time_utc: '2026-11-02T08:15:00+08:00',
        client_timezone: 'Asia/Singapore',
      },
    },
    fields: {
      'body/device_id': 'The reporting device’s id',
      'body/latitude': 'WGS 84 latitude in degrees, -90 to 90',
      'body/longitude': 'WGS 84 longitude in degrees, -180 to 180',
      'body/altitude': 'Metres above sea level, -1000 to 100000',
      'body/client_time_utc': 'When the device took the fix (ISO 8601 with an offset)',
      'body/client_timezone': 'The device’s IANA time zone',
    },
  },
  L2: {
    description: 'Reads one driver’s last stored position (drivers of the caller’s organisation; a driver: its own).',
    example: {
      params: {
        driver_id: EXAMPLE.newDriverID,
      },
    },
    fields: {
      'params/driver_id': 'The driver user’s id',
    },
  },
  L3: {
    description:
      'Finds the visible driver nearest to a point (great-circle distance), among fixes newer than ' +
      '`max_age_s`; 404 when there is none.',
    example: {
      query: {
        latitude: '1.2766',
        longitude: '103.8461',
        max_age_s: '3600',
      },
    },
    fields: {
      'query/latitude': 'The point’s WGS 84 latitude in degrees',
      'query/longitude': 'The point’s WGS 84 longitude in degrees',
      'query/max_age_s': 'Only fixes at most this many seconds old (default 86400)',
      'query/service_type': 'Only drivers offering this service',
    },
  },
  L4: {
    description: 'Lists every visible driver within `radius` metres of a point, nearest first.',
    example: {
      query: {
        latitude: '1.2766',
        longitude: '103.8461',
        radius: '5000',
      },
    },
    fields: {
      'query/latitude': 'The point’s WGS 84 latitude in degrees',
      'query/longitude': 'The point’s WGS 84 longitude in degrees',
      'query/radius': 'Metres around the point, more than 0, at most 50000',
      'query/max_age_s': 'Only fixes at most this many seconds old (default 86400)',
      'query/service_type': 'Only drivers offering this service',
    },
  },
  X13: {
    description:
      'Sends a phone’s buffer of 1 to 100 fixes in one request (lib/client/location-uploader.ts does it for an ' +
      'app). The newest fix newer than the stored one is stored exactly as L1 stores it; the others count as ' +
      '`ignored`. A malformed fix refuses the whole batch with a 400 at its path.',
    example: {
      body: {
        fixes: [
          { latitude: 1.2765, longitude: 103.846, client_time_utc: '2026-11-02T08:14:30+08:00' },
          {
            latitude: 1.2769,
            longitude: 103.8466,
            client_time_utc: '2026-11-02T08:15:00+08:00',
            client_timezone: 'Asia/Singapore',
          },
        ],
      },
    },
    fields: {
      'body/fixes': 'The fixes, 1 to 100, each an L1 body, in any order',
      'body/fixes/*/device_id': 'The reporting device’s id',
      'body/fixes/*/latitude': 'WGS 84 latitude in degrees, -90 to 90',
      'body/fixes/*/longitude': 'WGS 84 longitude in degrees, -180 to 180',
      'body/fixes/*/altitude': 'Metres above sea level, -1000 to 100000',
      'body/fixes/*/client_time_utc': 'When the device took the fix (ISO 8601 with an offset)',
      'body/fixes/*/client_timezone': 'The device’s IANA time zone',
    },
  },
};
