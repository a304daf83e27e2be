/**
 * The monthly cost of a reference fleet, by component, from per-operation units (measured by bench/capacity.ts) and
 * AWS's list prices. Pure arithmetic: test/unit/cost-model.test.ts checks it by hand. Run alone
 * (`npx tsx bench/cost-model.ts`) it prints the fleet's month from the units pinned by test/e2e/capacity.test.ts and
 * test/e2e/locations-batch.test.ts: one L1 a fix, and with the location uploader's defaults (one X13 a 30 s).
 */
import { pathToFileURL } from 'node:url';
import { UPLOADER_DEFAULTS } from '../lib/client/uploader-defaults.ts';
import { platformRecordsLogged } from '../lib/function-logging.ts';
import { GEO_TIME_GRANULARITY_S } from '../shared/locations/locations.ts';
import { POSITIONS_BATCHING_WINDOW_S } from '../shared/notifications/positions-window.ts';

/** us-east-1 list prices (checked 2025): each with the page it comes from. */
export const PRICES = {
  /** https://aws.amazon.com/dynamodb/pricing/on-demand/ (on-demand, after the November 2024 reduction) */
  dynamoWritePerMillion: 0.625,
  dynamoReadPerMillion: 0.125,
  /** https://aws.amazon.com/lambda/pricing/ (Arm) */
  lambdaPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  /** https://aws.amazon.com/api-gateway/pricing/ (HTTP APIs, first 300 million) */
  httpApiPerMillion: 1.0,
  /** … and each request of a month beyond the first 300 million. */
  httpApiPerMillionAbove300M: 0.9,
  /**
   * https://aws.amazon.com/ec2/pricing/on-demand/ (data transfer out to the internet, first 10 TB a month, after the
   * first 100 GB a month that are free): the answers of the HTTP API and the frames of the WebSocket API.
   */
  dataTransferOutPerGb: 0.09,
  dataTransferOutFreeGb: 100,
  /** https://aws.amazon.com/api-gateway/pricing/ (WebSocket APIs: messages metered in 32 KB increments) */
  websocketPerMillionMessages: 1.0,
  websocketPerMillionConnectionMinutes: 0.25,
  /** https://aws.amazon.com/cloudwatch/pricing/ (custom metrics, first 10 000; an EMF metric is one custom metric) */
  cloudwatchPerMetricMonth: 0.3,
  /** https://aws.amazon.com/cloudwatch/pricing/ (logs: standard ingestion, and storage a GB-month after compression) */
  logsIngestionPerGb: 0.5,
  logsStoragePerGbMonth: 0.03,
} as const;

export const SECONDS_PER_MONTH = 730 * 3600;
export const DAYS_PER_MONTH = 730 / 24;

/** Assumed: 1 % of answers are 4xx/5xx (a driver app's fixes are well-formed; alarms fire far below 1 % of 5xx). */
const ERROR_ANSWER_SHARE = 0.01;

/** The reference fleet of issue 15, and the assumptions the model needs beyond it (each written down). */
export const FLEET = {
  drivers: 10_000,
  fixIntervalS: 10,
  /** A driver at city speed crosses a 4.9 km precision-5 cell about every 10 minutes: one fix in 60. */
  crossingShare: 1 / 60,
  importedTasksPerDay: 20_000,
  planningsPerDay: 500,
  runsheetsPerPlanning: 40,
  driversPerPlanning: 20,
  candidates: 3,
  dispatchers: 200,
  /** 50 organisations of 200 drivers, 4 dispatchers each: a frame a second holds the ~20 drivers that moved. */
  organisations: 50,
  driverJsonBytes: 190,
  /** Locations-table stream shards feeding the positions consumer (one invocation a second each). */
  streamShards: 4,
  /**
   * The stream shards one organisation's position records arrive on. The consumer sends each organisation's
   * subscribers one frame per shard batch (shared/notifications/live-positions.ts), so a dispatcher gets a frame a
   * second from every shard that carried one of its drivers. Drivers' items keyed per driver (`LOC#<driver>`) spread
   * an organisation over all `streamShards` (4: $1 705 a month of frames with the uploader); keyed per organisation
   * (`LOCS#<org> / <driver>`, shared/locations/locations.ts), an organisation's items share one partition, hence one
   * shard (until DynamoDB splits a key for heat: docs/live-operations.md).
   */
  orgShards: 1,
  /** The geo index entry's granule (`geo_time`, shared/locations/locations.ts): a standing driver rewrites it once in it. */
  geoGranuleS: GEO_TIME_GRANULARITY_S,
  /** The positions consumer's batching window (`maxBatchingWindow`, lib/stacks/realtime-stack.ts), seconds. */
  batchWindowS: POSITIONS_BATCHING_WINDOW_S,
  /** API Gateway keeps the authorizer's answer 300 s per token: one authorizer run per driver per 300 s. */
  authorizerCacheS: 300,
  lambdaMemoryGb: 0.5,
  /** Assumed billed duration of one handler invocation (local runs: 5–30 ms for these operations). */
  lambdaMs: 25,
  /** Fixes a request carries: 1 with one L1 a fix; the uploader sends its buffer in one X13 (UPLOADER_FLEET). */
  fixesPerRequest: 1,
  /**
   * The share of stored fixes that leave their driver in the precision-6 cell of the stored one (a driver standing
   * still: the item write alone, the index entry once a GEO_TIME_GRANULARITY_S). 0 here: issue 15's reference fleet,
   * every driver moving all the time. STANDING_FLEET prices a sourced share.
   */
  standingShare: 0,
  /**
   * CloudWatch custom metrics: the handler kit's EMF line records ClientErrors, ServerErrors, Latency, RCU and WCU
   * (shared/metrics.ts) with the dimension `operation`: each pair is one metric. No `Requests`: the dashboard counts
   * requests as Latency's SampleCount (lib/stacks/monitoring-stack.ts; test/infra/monitoring.test.ts).
   */
  metricsPerOperation: 5,
  operations: 122,
  /**
   * Log bytes a request's function invocation ingests. The EMF metrics line (~500 bytes: 490 measured by test/unit/metrics.test.ts,
   * which pins it at most 500, for an X13 success with its request id, caller id and X-Ray trace id; 588 before it was
   * slimmed, without the trace id). The request line (~450 bytes; 282 measured without a caller) only for an error
   * answer since issue 27.4 (shared/http/endpoint.ts: a success's details ride in its EMF line), `errorAnswerShare`
   * of them. The platform's START/END/REPORT (~350 bytes) only while
   * the functions' system log level lets them through (lib/function-logging.ts: WARN, so not).
   */
  logBytesPerInvocation: 500 + 450 * ERROR_ANSWER_SHARE + (platformRecordsLogged() ? 350 : 0),
  errorAnswerShare: ERROR_ANSWER_SHARE,
  /**
   * The HTTP API's access log line of every request (HTTP_ACCESS_LOG_FORMAT in lib/stacks/api-stack.ts: 15 fields;
   * 415 bytes measured by test/infra/access-log.test.ts for an X13 success with an Android browser's user agent, 120
   * bytes of it, which pins it at most this figure; 666 with the 21 fields before).
   */
  accessLogBytesPerRequest: 420,
  /**
   * Bytes out a request's answer costs: an X13's (one of 877 M) is ~130 bytes of JSON (code, message, server_time,
   * accepted, ignored) and ~520 of headers (status line, the five CORS headers, X-Request-Id, Content-Type, and API
   * Gateway's Date, Content-Length and Apigw-Requestid).
   */
  answerBytesPerRequest: 650,
  /** A `driver.location` frame's envelope beside its drivers (type, channel, name, data: {drivers: […]}). */
  frameEnvelopeBytes: 80,
  /** CloudWatch Logs compresses stored logs (about 0.15 of their raw size); retention is a month (dispatch-function.ts). */
  logStorageRatio: 0.15,
} as const;

/** The reference fleet with the location uploader's defaults: one X13 every upload interval, its fixes batched. */
export const UPLOADER_FLEET = {
  ...FLEET,
  fixesPerRequest: UPLOADER_DEFAULTS.uploadIntervalS / FLEET.fixIntervalS,
} as const;

/**
 * The uploader's fleet on a working day, with drivers standing still part of the time. Source: Dalla Chiara,
 * Krutein, Ranjbari and Goodchild, "Commercial Vehicle Driver Behaviors and Decision Making: Lessons Learned from
 * Urban Ridealongs", Transportation Research Record (2021): urban commercial vehicles spent on average 80 % of their
 * daily operating time parked. The phone is the driver's, not the vehicle's: at a stop it walks to the door and back,
 * and a standing phone's GPS wanders by metres. Assumed: half of the parked time's uploads stand still, 0.8 × 0.5 =
 * 0.4 (chosen when the index cell was precision 9, 4.8 m, which a wandering phone left now and then; at precision 6,
 * 1.2 km × 0.6 km, nearly every parked upload stays in its cell, so 0.4 is now the cautious end). The model's least
 * certain figure: bench prints the month at 0 and at it.
 */
export const STANDING_FLEET = {
  ...UPLOADER_FLEET,
  standingShare: 0.8 * 0.5,
} as const;

/** A fleet like FLEET with any figures. */
export type Fleet = { [K in keyof typeof FLEET]: number };

export interface Units {
  rcu: number;
  wcu: number;
}

/** Per-operation units the model needs. */
export interface ModelInput {
  fixMove: Units;
  /**
   * Beside `fixMove` (a moving request's own units), the geo index's write units a second of driving: its entry moves
   * on leaving a cell and is rewritten when its granule turns, at a rate set by the driving, not by how often the phone
   * sends. A request carries those of the seconds since the last one.
   */
  moveIndexWcuPerS: number;
  fixCrossing: Units;
  /** A fix in the stored fix's precision-6 cell (the item alone), and the index entry's rewrite once a granule. */
  fixStill: Units;
  geoTimeRefresh: Units;
  /** Per imported task (item writes of the import worker). */
  importPerTask: Units;
  /** Per runsheet added (P5), per driver added (P7), per pair of the job (P9), per accept (R6). */
  runsheetAdded: Units;
  driverAdded: Units;
  pair: Units;
  accept: Units;
  /** Lambda invocations per authenticated request beside the handler (the uncached authorizer was 1). */
  authorizerPerRequest: number;
}

export interface Line {
  component: string;
  quantity: number;
  unit: string;
  usd: number;
}

/**
 * The stream batches that carry an organisation's positions, a second, fleet-wide; and one frame's bytes. An
 * organisation's drivers store `drivers / organisations / (fixIntervalS × fixesPerRequest)` positions a second (one
 * stream record each), spread evenly over `orgShards` shards; each shard's batch (one a `batchWindowS`) holds at
 * least one of them with the Poisson probability 1 − e^(−λ·window/shards), and every such batch is one frame to each
 * of its subscribers.
 */
export function organisationBatches(fleet: Fleet): { perSecond: number; frameBytes: number } {
  if (fleet.organisations <= 0 || fleet.orgShards <= 0) return { perSecond: 0, frameBytes: 0 };
  const positionsPerSecond = fleet.drivers / fleet.organisations / (fleet.fixIntervalS * fleet.fixesPerRequest);
  const perShardWindow = (positionsPerSecond * fleet.batchWindowS) / fleet.orgShards;
  const batchesPerOrganisation = (fleet.orgShards * (1 - Math.exp(-perShardWindow))) / fleet.batchWindowS;
  return {
    perSecond: fleet.organisations * batchesPerOrganisation,
    frameBytes: (positionsPerSecond / batchesPerOrganisation) * fleet.driverJsonBytes,
  };
}

export function monthlyCost(input: ModelInput, fleet: Fleet = FLEET, prices: typeof PRICES = PRICES): Line[] {
  const fixes = (fleet.drivers * SECONDS_PER_MONTH) / fleet.fixIntervalS;
  // One write per request (L1's, or X13's of its newest fix): a request of n fixes crosses n times as often.
  const fixRequests = fixes / fleet.fixesPerRequest;
  const crossing = Math.min(1, fleet.crossingShare * fleet.fixesPerRequest);
  const secondsPerRequest = fleet.fixIntervalS * fleet.fixesPerRequest;
  const moveUnits = (key: keyof Units) =>
    input.fixMove[key] + (key === 'wcu' ? input.moveIndexWcuPerS * secondsPerRequest : 0);
  const moving = (key: keyof Units) => moveUnits(key) * (1 - crossing) + input.fixCrossing[key] * crossing;
  // Standing still: one request every fixIntervalS × fixesPerRequest seconds; the entry's geo_time turns once a granule.
  const refreshes = Math.min(1, (fleet.fixIntervalS * fleet.fixesPerRequest) / fleet.geoGranuleS);
  const still = (key: keyof Units) => input.fixStill[key] + input.geoTimeRefresh[key] * refreshes;
  const perFix = (key: keyof Units) => moving(key) * (1 - fleet.standingShare) + still(key) * fleet.standingShare;
  const days = DAYS_PER_MONTH;
  const tasks = fleet.importedTasksPerDay * days;
  const runsheets = fleet.planningsPerDay * fleet.runsheetsPerPlanning * days;
  const plannedDrivers = fleet.planningsPerDay * fleet.driversPerPlanning * days;
  const pairs = runsheets * fleet.candidates;
  const accepts = runsheets;
  const apiRequests = fixRequests + runsheets / 10 + plannedDrivers / 8 + fleet.planningsPerDay * days + accepts;
  const units = (key: keyof Units) =>
    fixRequests * perFix(key) +
    tasks * input.importPerTask[key] +
    runsheets * input.runsheetAdded[key] +
    plannedDrivers * input.driverAdded[key] +
    pairs * input.pair[key] +
    accepts * input.accept[key];
  const streamInvocations = (fleet.streamShards * SECONDS_PER_MONTH) / fleet.batchWindowS;
  const batches = organisationBatches(fleet);
  // Per organisation per batch: one subscriber Query (0.5 RCU) and its dispatchers' token generations (0.5 RCU each).
  const subscriberReads =
    batches.perSecond *
    SECONDS_PER_MONTH *
    (0.5 + (fleet.organisations > 0 ? fleet.dispatchers / fleet.organisations : 0) * 0.5);
  const handlerInvocations = apiRequests * (1 + input.authorizerPerRequest) + streamInvocations;
  const frames =
    fleet.organisations > 0
      ? (fleet.dispatchers / fleet.organisations) *
        batches.perSecond *
        SECONDS_PER_MONTH *
        Math.ceil(batches.frameBytes / 32_768)
      : 0;
  const frameGb = (frames * (batches.frameBytes + fleet.frameEnvelopeBytes)) / 1e9;
  const transferOutGb = (apiRequests * fleet.answerBytesPerRequest) / 1e9 + frameGb;
  const connectionMinutes = (fleet.dispatchers * SECONDS_PER_MONTH) / 60;
  const gbSeconds = handlerInvocations * fleet.lambdaMemoryGb * (fleet.lambdaMs / 1000);
  const customMetrics = fleet.metricsPerOperation * fleet.operations;
  // A request's function writes its line(s); the authorizer (functions/auth/authorizer.ts) and the positions consumer
  // write none unless something fails.
  const logGb = (apiRequests * (fleet.logBytesPerInvocation + fleet.accessLogBytesPerRequest)) / 1e9;
  return [
    {
      component: 'DynamoDB writes',
      quantity: units('wcu'),
      unit: 'write units',
      usd: (units('wcu') / 1e6) * prices.dynamoWritePerMillion,
    },
    {
      component: 'DynamoDB reads',
      quantity: units('rcu') + subscriberReads,
      unit: 'read units',
      usd: ((units('rcu') + subscriberReads) / 1e6) * prices.dynamoReadPerMillion,
    },
    {
      component: 'Lambda requests',
      quantity: handlerInvocations,
      unit: 'invocations',
      usd: (handlerInvocations / 1e6) * prices.lambdaPerMillionRequests,
    },
    {
      component: 'Lambda duration',
      quantity: gbSeconds,
      unit: 'GB-seconds',
      usd: gbSeconds * prices.lambdaPerGbSecond,
    },
    {
      component: 'API Gateway HTTP',
      quantity: apiRequests,
      unit: 'requests',
      usd:
        (Math.min(apiRequests, 300e6) / 1e6) * prices.httpApiPerMillion +
        (Math.max(0, apiRequests - 300e6) / 1e6) * prices.httpApiPerMillionAbove300M,
    },
    {
      component: 'WebSocket messages',
      quantity: frames,
      unit: '32 KB messages',
      usd: (frames / 1e6) * prices.websocketPerMillionMessages,
    },
    {
      component: 'WebSocket connection time',
      quantity: connectionMinutes,
      unit: 'connection-minutes',
      usd: (connectionMinutes / 1e6) * prices.websocketPerMillionConnectionMinutes,
    },
    {
      component: 'Data transfer out',
      quantity: transferOutGb,
      unit: 'GB (answers and frames)',
      usd: Math.max(0, transferOutGb - prices.dataTransferOutFreeGb) * prices.dataTransferOutPerGb,
    },
    {
      component: 'CloudWatch custom metrics',
      quantity: customMetrics,
      unit: 'metrics',
      usd: customMetrics * prices.cloudwatchPerMetricMonth,
    },
    {
      component: 'CloudWatch Logs ingestion',
      quantity: logGb,
      unit: 'GB',
      usd: logGb * prices.logsIngestionPerGb,
    },
    {
      component: 'CloudWatch Logs storage',
      quantity: logGb * fleet.logStorageRatio,
      unit: 'GB-months',
      usd: logGb * fleet.logStorageRatio * prices.logsStoragePerGbMonth,
    },
  ];
}

/** Issue 15's figures before the redesign (the uncached authorizer ran on every request). */
export const BEFORE: ModelInput = {
  fixMove: { rcu: 1.5, wcu: 6 },
  moveIndexWcuPerS: 0,
  fixCrossing: { rcu: 1.5, wcu: 22 },
  // Standing still was priced as moving then (the fleet's standingShare is 0 for it).
  fixStill: { rcu: 1.5, wcu: 6 },
  geoTimeRefresh: { rcu: 0, wcu: 0 },
  // Imports did not change in issue 15: the figure measured now (bench/capacity.ts, I6).
  importPerTask: { rcu: 0.01, wcu: 2.57 },
  runsheetAdded: { rcu: 0.35, wcu: 4.4 },
  driverAdded: { rcu: 1.19, wcu: 2.5 },
  pair: { rcu: 29.5 / 30, wcu: 9.4 },
  accept: { rcu: 6, wcu: 38 },
  authorizerPerRequest: 1,
};

/**
 * The units measured now (test/e2e/capacity.test.ts pins them; X13's moving batch costs one L1 move, pinned by
 * test/e2e/locations-batch.test.ts). P5, P7 and P9 are per runsheet, driver and pair; the authorizer runs once per
 * token per 300 s (one driver's requests every `fixIntervalS × fixesPerRequest` seconds).
 */
export const NOW: ModelInput = {
  // Issue 27 (geo entry at precision 6, G = 300 s): test/e2e/capacity.test.ts's 30-minute city route at 6 m/s, one X13
  // every 30 s, 60 uploads: 39 the item alone (1 WCU), 6 a granule turn (2), 13 into another precision-6 cell (3), 2
  // into another precision-5 cell (5, priced by fixCrossing at the fleet's crossing share). A moving request is its
  // item (1 WCU) and the entry's 13 × 2 + 6 WCU over the 58 others' 1 740 s of driving: 1.55 WCU an upload every
  // 30 s, 1.18 a fix every 10 s (the same driving, its entry writes over three times the requests).
  fixMove: { rcu: 0.5, wcu: 1 },
  moveIndexWcuPerS: (13 * 2 + 6) / (58 * 30),
  fixCrossing: { rcu: 0.5, wcu: 5 },
  // Issue 27.2 (test/e2e/capacity.test.ts 'a driver standing still'): the item alone, the entry's geo_time 1 WCU more.
  fixStill: { rcu: 0.5, wcu: 1 },
  geoTimeRefresh: { rcu: 0, wcu: 1 },
  // Issue 26: a task's two X10 index entries (4.10, the lease extended once per 5 000 items); a pair's X12 entry (P9
  // 81 WCU for 30 pairs), an accept moving the winner's and the rivals' X12 entries (R6 16 WCU).
  importPerTask: { rcu: 1 / 100, wcu: 4.1 },
  runsheetAdded: { rcu: 2 / 10, wcu: 11 / 10 },
  driverAdded: { rcu: 6 / 8, wcu: 9 / 8 },
  pair: { rcu: 10.5 / 30, wcu: 81 / 30 },
  accept: { rcu: 8, wcu: 16 },
  authorizerPerRequest: FLEET.fixIntervalS / FLEET.authorizerCacheS,
};

const dollars = (n: number) => `$${n.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;

/** Prints one fleet's month, line by line; returns its total. */
export function printMonth(title: string, lines: Line[]): number {
  const total = lines.reduce((sum, line) => sum + line.usd, 0);
  console.log(`\n### ${title}: ${dollars(total)} a month`);
  console.log('| component | quantity | cost / month |');
  console.log('|---|---|---|');
  for (const line of lines) {
    const quantity = line.quantity.toLocaleString('en-US', { maximumFractionDigits: line.quantity < 10 ? 2 : 0 });
    console.log(`| ${line.component} | ${quantity} ${line.unit} | ${dollars(line.usd)} |`);
  }
  return total;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const u = UPLOADER_DEFAULTS;
  console.log(
    `Reference fleet: ${FLEET.drivers} drivers, a fix every ${FLEET.fixIntervalS} s; uploader: a fix kept every ${u.timeFilterS} s or ${u.distanceFilterM} m, one X13 every ${u.uploadIntervalS} s or ${u.maxFixesPerUpload} fixes (${UPLOADER_FLEET.fixesPerRequest} fixes a request).`,
  );
  const perFix = printMonth('One L1 a fix (the units measured now)', monthlyCost(NOW, FLEET));
  const uploaderInput = {
    ...NOW,
    authorizerPerRequest: Math.min(1, NOW.authorizerPerRequest * UPLOADER_FLEET.fixesPerRequest),
  };
  const batched = printMonth(
    `With the uploader's defaults (one X13 every ${u.uploadIntervalS} s), every driver moving`,
    monthlyCost(uploaderInput, UPLOADER_FLEET),
  );
  const standing = printMonth(
    `With the uploader's defaults and ${STANDING_FLEET.standingShare * 100} % of uploads standing still (STANDING_FLEET)`,
    monthlyCost(uploaderInput, STANDING_FLEET),
  );
  console.log(
    `\nBatched / one a fix: ${(batched / perFix).toFixed(2)}; with standing drivers: ${(standing / perFix).toFixed(2)}`,
  );
}
