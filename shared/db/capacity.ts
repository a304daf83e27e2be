import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Capacity belongs to the repository: every DynamoDB call asks for its consumed capacity (INDEXES where the operation
 * takes it, TOTAL where it does not) and adds it to the current request's tally, which the handler factory puts on
 * the request log line and the metrics.
 */
export interface Tally {
  calls: number;
  rcu: number;
  wcu: number;
}

interface Consumed {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

const scope = new AsyncLocalStorage<Tally>();

/** Operations whose ConsumedCapacity the middleware reads; the rest (DescribeTable, CreateTable …) are not counted. */
const COUNTED = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactGetItemsCommand',
  'TransactWriteItemsCommand',
  'ExecuteStatementCommand',
  'BatchExecuteStatementCommand',
  'ExecuteTransactionCommand',
]);
/** PartiQL calls take only TOTAL. */
const TOTAL_ONLY = new Set(['ExecuteStatementCommand', 'BatchExecuteStatementCommand', 'ExecuteTransactionCommand']);

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/**
 * Who hears of each finished scope's tally (tests and benchmarks measuring operations through the local host), with
 * the request's status where the scope is a request.
 */
export const tallyObservers = new Set<(tally: Tally, label: string, status?: number, ms?: number) => void>();

/**
 * Runs fn with a fresh tally and returns both; `status` tells the observers how a request ended, `ms` how long the
 * scope took (the benches profile the sweep's parts by it).
 */
export async function withCapacity<T>(
  fn: () => Promise<T>,
  label = '',
  status?: () => number | undefined,
): Promise<{ result: T; tally: Tally }> {
  const tally: Tally = { calls: 0, rcu: 0, wcu: 0 };
  const started = performance.now();
  const result = await scope.run(tally, fn);
  const ms = performance.now() - started;
  const total = rounded(tally);
  for (const observer of tallyObservers) observer(total, label, status?.(), ms);
  return { result, tally: total };
}

/** The tally of the current request (undefined outside one). */
export const currentTally = (): Tally | undefined => scope.getStore();

const rounded = (tally: Tally): Tally => ({
  calls: tally.calls,
  rcu: Math.round(tally.rcu * 1000) / 1000,
  wcu: Math.round(tally.wcu * 1000) / 1000,
});

/** Adds the consumed capacity of one response to a tally. */
export function addConsumed(tally: Tally, command: string, consumed: Consumed | Consumed[] | undefined): void {
  tally.calls++;
  for (const entry of consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed]) {
    const read = entry.ReadCapacityUnits;
    const write = entry.WriteCapacityUnits;
    if (read !== undefined || write !== undefined) {
      tally.rcu += read ?? 0;
      tally.wcu += write ?? 0;
    } else if (WRITES.has(command)) tally.wcu += entry.CapacityUnits ?? 0;
    else tally.rcu += entry.CapacityUnits ?? 0;
  }
}

/** Attaches the middleware to a client (once). */
export function recordCapacity(client: DynamoDBClient): DynamoDBClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context as { commandName?: string }).commandName ?? '';
      if (!COUNTED.has(command)) return next(args);
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = TOTAL_ONLY.has(command) ? 'TOTAL' : 'INDEXES';
      const tally = scope.getStore();
      try {
        const result = await next(args);
        if (tally) addConsumed(tally, command, (result.output as { ConsumedCapacity?: Consumed }).ConsumedCapacity);
        return result;
      } catch (error) {
        // Failed conditional writes still consume capacity; a cancelled transaction reports none.
        if (tally) addConsumed(tally, command, (error as { ConsumedCapacity?: Consumed }).ConsumedCapacity);
        throw error;
      }
    },
    { step: 'initialize', name: 'consumedCapacity', override: true },
  );
  return client;
}
