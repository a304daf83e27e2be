/**
 * The benchmarks' environment, imported first by `bench/run.ts`: imports are evaluated before the importing module's
 * own statements, and the logger and the clients read these when their modules load.
 */
process.env['LOG_LEVEL'] ??= 'SILENT';
// Benchmarks load the emulator far past a request's normal size (100 000 drivers): no request or connect timeout cuts
// them off (a busy emulator on two cores can take seconds to accept a connection).
process.env['DEPENDENCY_REQUEST_TIMEOUT_MS'] ??= '60000';
process.env['DEPENDENCY_CONNECT_TIMEOUT_MS'] ??= '30000';
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
