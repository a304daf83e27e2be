/**
 * The work queue port. In the cloud an SQS queue (with a dead-letter queue) feeds a worker function; locally an
 * in-process queue runs the same worker after the same delay. Delays past SQS's 15-minute maximum are carried by the
 * message (`not_before`) and the worker puts such a message back until it is due.
 */
import { randomUUID } from 'node:crypto';
import { wire } from '#shared/aws/wire';
import { withCapacity } from '#shared/db/capacity';
import { asFunction, standsFor } from '#shared/local-invocation';

export interface QueuedMessage {
  /** Which worker handles it. */
  kind: 'webhook' | 'import' | 'planning' | 'route_build';
  /** Epoch ms before which the message must not be handled. */
  not_before?: number;
  /**
   * Given by `enqueue`, the same on every receive of this message: a worker's lease names it, so that a retry of the
   * message may take over a lease its own failed receive could not release (a duplicate message may not).
   */
  message_id?: string;
  /**
   * The message's group on a fair queue (the route queue: the build's organisation). SQS serves the groups fairly
   * (a group with many messages in flight waits behind one with few); locally the route queue takes turns by group.
   */
  group?: string;
  [key: string]: unknown;
}

export interface QueuePort {
  enqueue(message: QueuedMessage, delayMs: number): Promise<void>;
  /**
   * How many messages wait in the queue, not yet handed to a worker (delayed ones included): the requeue sweep's
   * look at the route queue (shared/workers/requeue.ts).
   */
  waiting(): Promise<number>;
}

type Worker = (message: QueuedMessage) => Promise<void>;

const workers = new Map<QueuedMessage['kind'], Worker>();
const pending = new Set<Promise<void>>();

/** Locally, each kind of message is handled in-process by the worker registered for it. */
export function registerLocalWorker(kind: QueuedMessage['kind'], worker: Worker): void {
  workers.set(kind, worker);
}

/** Like SQS's redrive policy (maxReceiveCount 5): a message that fails five times goes to the dead-letter list. */
export const LOCAL_MAX_RECEIVES = 5;
/** Locally, the dead-letter queue: each message with the reason it was given up on. */
export const localDeadLetters: { message: QueuedMessage; reason: string }[] = [];

/**
 * The function that consumes a kind of message: route builds have a queue and a worker function of their own
 * (workers/routes: a solve of minutes must not hold up imports, planning jobs or webhook deliveries); every other kind
 * is the work queue's (workers/queue).
 */
const LOCAL_CONSUMER = (kind: QueuedMessage['kind']) => (kind === 'route_build' ? 'workers/routes' : 'workers/queue');

/**
 * Locally, route builds run at most `LOCAL_ROUTE_BUILDS_AT_ONCE` at a time, as the route worker's concurrency bounds
 * them in the cloud (lib/stacks/workers-stack.ts); the others wait in their group's line (the build's organisation),
 * and a free place goes to the groups in turn (round robin), not to the oldest message: one organisation's builds
 * never hold back another's longer than one build, as SQS's fair queue serves them in the cloud.
 */
export const LOCAL_ROUTE_BUILDS_AT_ONCE = 2;
const routeLines = new Map<string, (() => void)[]>();
let routeBuildsRunning = 0;
/** Messages of each local queue not yet handed to a worker (delayed, or waiting their turn). */
const waitingCount = { workQueue: 0, routeQueue: 0 };

/** Runs `run` when a place is free: at once for any kind but route builds, else in its group's turn. */
function inTurn(message: QueuedMessage, run: () => Promise<void>): Promise<void> {
  if (message.kind !== 'route_build') return run();
  return new Promise<void>((resolve, reject) => {
    const start = () => {
      routeBuildsRunning++;
      waitingCount.routeQueue--;
      run()
        .then(resolve, reject)
        .finally(() => {
          routeBuildsRunning--;
          startNextRouteBuild();
        });
    };
    waitingCount.routeQueue++;
    const group = message.group ?? '';
    routeLines.set(group, [...(routeLines.get(group) ?? []), start]);
    startNextRouteBuild();
  });
}

/** Hands a free place to the first group in line, which then goes to the back of the line. */
function startNextRouteBuild(): void {
  if (routeBuildsRunning >= LOCAL_ROUTE_BUILDS_AT_ONCE) return;
  const next = routeLines.entries().next();
  if (next.done) return;
  const [group, line] = next.value;
  routeLines.delete(group);
  const start = line.shift()!;
  if (line.length > 0) routeLines.set(group, line);
  start();
}

function handleLocally(message: QueuedMessage, delayMs: number, receive: number): void {
  const queueName = message.kind === 'route_build' ? 'routeQueue' : 'workQueue';
  waitingCount[queueName]++;
  const timer = setTimeout(
    () => {
      waitingCount[queueName]--;
      const worker = workers.get(message.kind);
      if (!worker) {
        console.error(`local queue: no worker for ${message.kind}; message dead-lettered`);
        localDeadLetters.push({ message, reason: `no worker for kind ${message.kind}` });
        return;
      }
      // The queue's consumer is its own function (workers/queue), whoever sent the message.
      // Each message's DynamoDB capacity is its own tally (`queue:<kind>`), not the sender's request's.
      const run = inTurn(message, () =>
        withCapacity(
          () => asFunction(LOCAL_CONSUMER(message.kind), () => worker(message)),
          `queue:${message.kind}`,
        ).then(() => undefined),
      ).catch((error: unknown) => {
        // As SQS does after the visibility timeout: hand the message back, with backoff, until the receive limit.
        if (receive < LOCAL_MAX_RECEIVES) {
          console.error(`local ${message.kind} worker failed (receive ${receive}); retrying`, error);
          handleLocally(message, 200 * 2 ** receive * (0.5 + Math.random()), receive + 1);
          return;
        }
        console.error(`local ${message.kind} worker failed ${receive} times; message dead-lettered`, error);
        localDeadLetters.push({ message, reason: (error as Error)?.message ?? String(error) });
      });
      pending.add(run);
      void run.finally(() => pending.delete(run));
    },
    Math.max(0, delayMs),
  );
  timer.unref();
}

const localQueueFor = (resource: 'workQueue' | 'routeQueue'): QueuePort => ({
  async enqueue(message, delayMs) {
    standsFor({ action: 'sqs:SendMessage', resource });
    localMessagesSent.set(message.kind, (localMessagesSent.get(message.kind) ?? 0) + 1);
    handleLocally({ message_id: randomUUID(), ...message }, delayMs, 1);
  },
  async waiting() {
    standsFor({ action: 'sqs:GetQueueAttributes', resource });
    return waitingCount[resource];
  },
});

/** For tests: how many messages each local queue has sent, per kind (the requeue sweep's duplicates show here). */
export const localMessagesSent = new Map<QueuedMessage['kind'], number>();

export const localQueue: QueuePort = localQueueFor('workQueue');
const localRouteQueue: QueuePort = localQueueFor('routeQueue');

/** For tests and shutdown: waits until no local message is being handled. */
export async function drainLocalQueue(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending]);
}

export function sqsQueue(queueUrl: string): QueuePort {
  const sqs = import('@aws-sdk/client-sqs').then((sdk) => ({ sdk, client: new sdk.SQSClient(wire()) }));
  return {
    async enqueue(message, delayMs) {
      const { sdk, client } = await sqs;
      await client.send(
        new sdk.SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({ message_id: randomUUID(), ...message, not_before: Date.now() + delayMs }),
          DelaySeconds: Math.min(900, Math.max(0, Math.ceil(delayMs / 1000))),
          // A fair queue's tenant (SQS fair queues: a standard queue served fairly by message group).
          ...(message.group ? { MessageGroupId: message.group } : {}),
        }),
      );
    },
    async waiting() {
      const { sdk, client } = await sqs;
      const out = await client.send(
        new sdk.GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const count = (name: string) => Number(out.Attributes?.[name as 'ApproximateNumberOfMessages'] ?? 0);
      return count('ApproximateNumberOfMessages') + count('ApproximateNumberOfMessagesDelayed');
    },
  };
}

let port: QueuePort | undefined;
let routePort: QueuePort | undefined;

/** The route-build queue (contract 4.10): its own SQS queue and worker function in the cloud, the same worker locally. */
export function routeQueue(): QueuePort {
  if (!routePort) {
    const url = process.env['ROUTE_QUEUE_URL'];
    if (url) routePort = sqsQueue(url);
    else if (process.env['DISPATCH_LOCAL'] === '1') routePort = localRouteQueue;
    else throw new Error('missing required environment variable ROUTE_QUEUE_URL');
  }
  return routePort;
}

export function queue(): QueuePort {
  if (!port) {
    const url = process.env['WORK_QUEUE_URL'];
    if (url) port = sqsQueue(url);
    else if (process.env['DISPATCH_LOCAL'] === '1') port = localQueue;
    else throw new Error('missing required environment variable WORK_QUEUE_URL');
  }
  return port;
}
