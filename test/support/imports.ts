/** The delivery window every test import job uses (I4a/I4b's required members besides the files). */
export const IMPORT_WINDOW = {
  start_timezone: 'Asia/Singapore',
  start_time: '2026-11-22T00:00:00+08:00',
  end_timezone: 'Asia/Singapore',
  end_time: '2026-11-22T23:00:00+08:00',
  service_type: 'van_1.7m',
};
