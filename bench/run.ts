/** `npm run bench`: prints figures and ratios; asserts nothing. */
import { benchAccounts } from './accounts.ts';
import { benchBundles } from './bundles.ts';
import { benchCapacity } from './capacity.ts';
import { benchCost } from './cost.ts';
import { benchFanOut } from './fanout.ts';
import { stopBenchHost } from './host.ts';
import { benchImports } from './imports.ts';
import { benchLiveOps } from './liveops.ts';
import { benchLocations } from './locations.ts';
import { benchPlanning } from './planning.ts';
import { benchRequests } from './requests.ts';
import { benchScale } from './scale.ts';

process.env['LOG_LEVEL'] ??= 'SILENT';
// Benchmarks load the emulator far past a request's normal size (100 000 drivers): no request or connect timeout cuts
// them off (a busy emulator on two cores can take seconds to accept a connection).
process.env['DEPENDENCY_REQUEST_TIMEOUT_MS'] ??= '60000';
process.env['DEPENDENCY_CONNECT_TIMEOUT_MS'] ??= '30000';
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
console.log(`# Dispatch benchmarks  (node ${process.version}, ${new Date().toISOString()})`);
const measured = await benchCapacity();
benchCost(measured);
benchScale();
await benchBundles();
await benchRequests();
await benchAccounts();
await benchLocations();
await benchFanOut();
await benchLiveOps();
await benchImports();
await benchPlanning();
await stopBenchHost();
