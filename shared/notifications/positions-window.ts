/**
 * The live positions' batching window (seconds): how long the locations table's stream gathers fixes into one batch,
 * so one `driver.location` frame per dispatcher per window. The cloud's event source mapping (`maxBatchingWindow` in
 * lib/stacks/realtime-stack.ts) and the local host's stream poller (lib/local/start.ts) both use it, so local mode
 * batches as the cloud does. WebSocket messages are billed per message: a dispatcher costs one frame a window, so a
 * longer window divides that bill, and it adds up to the window to the lag of a fix. Chosen with bench/position-lag.ts
 * (docs/live-operations.md "Lag"): the largest window whose p99 fix-to-frame lag stays within the goal (the upload
 * interval + 2 s) with about a second to spare.
 */
export const POSITIONS_BATCHING_WINDOW_S = 3;
