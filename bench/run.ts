/** `npm run bench`: prints figures and ratios; asserts nothing. */
import './env.ts';
import { benchAccounts } from './accounts.ts';
import { benchBundles } from './bundles.ts';
import { benchCapacity } from './capacity.ts';
import { benchCost } from './cost.ts';
import { benchDispatchDay } from './dispatch-day.ts';
import { benchFanOut } from './fanout.ts';
import { stopBenchHost } from './host.ts';
import { benchHotKeys } from './hot-keys.ts';
import { benchImports } from './imports.ts';
import { benchLiveEtas } from './live-etas.ts';
import { benchLiveOps } from './liveops.ts';
import { benchLocations } from './locations.ts';
import { benchOperations } from './operations.ts';
import { benchPairing } from './pairing.ts';
import { benchPlanning } from './planning.ts';
import { benchPositionLag } from './position-lag.ts';
import { benchRequests } from './requests.ts';
import { benchRouting } from './routing.ts';
import { benchRoutingInsertion } from './routing-insertion.ts';
import { benchRoutingScale } from './routing-scale.ts';
import { benchRoutingSolver } from './routing-solver.ts';
import { benchScale } from './scale.ts';
import { benchTracking } from './tracking.ts';
import { benchValidation } from './validation.ts';

console.log(`# Dispatch benchmarks  (node ${process.version}, ${new Date().toISOString()})`);
const measured = await benchCapacity();
benchOperations();
benchCost(measured);
benchScale();
await benchBundles();
await benchRequests();
benchValidation();
await benchAccounts();
await benchLocations();
await benchFanOut();
await benchLiveOps();
await benchPositionLag();
// 500 drivers for 1 minute here (a 2-core machine); `npx tsx bench/live-etas.ts` runs the 5 minutes.
await benchLiveEtas({ drivers: 500, minutes: 1 });
await benchTracking();
await benchImports();
benchPairing();
await benchPlanning();
await benchDispatchDay();
// Route planning: the solver alone on the published instances, then through the service's own path (X23/X24).
benchRoutingSolver({ limitS: Number(process.env['ROUTING_LIMIT_S'] ?? 10) });
await benchRouting();
await benchRoutingScale();
await benchRoutingInsertion();
// Its own process: its host's DynamoDB client points at the counting proxy.
await benchHotKeys();
await stopBenchHost();
