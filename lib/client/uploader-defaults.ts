/**
 * The location uploader's defaults (issue 27): what a phone keeps and how often it sends, modelled on AWS's mobile
 * tracking SDK for Amazon Location (time filter 30 s, distance filter 30 m, up to 10 positions a call). The uploader in
 * this client and the cost model (bench/cost-model.ts) share these figures, so the priced fleet is the one the app
 * produces; change them here and both follow.
 */
export const UPLOADER_DEFAULTS = {
  /** A sample is kept when this long has passed since the last kept one (a driver standing still: one fix each). */
  timeFilterS: 30,
  /** … or when the driver is at least this far from the last kept one (a moving driver: every sample, e.g. 10 s). */
  distanceFilterM: 30,
  /** One X13 (POST /v1/driver/locations) at most this often; a kept fix goes as soon as this has passed since the last
   * (a fix kept sooner waits for the one that completes it, or a timer: at most this long). */
  uploadIntervalS: 30,
  /** … or as soon as this many fixes are waiting (X13 takes up to 100; AWS's SDK sends 10 a call). */
  maxFixesPerUpload: 10,
} as const;
