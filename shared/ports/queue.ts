/**
 * The work queue port. In the cloud an SQS queue (with a dead-letter queue) feeds a worker function; locally an
 * in-process queue runs the same worker after the same delay. Delays past SQS's 15-minute maximum are carried by the
 * message (`not_before`) and the worker puts such a message back until it is due.
 */
import { wire } from '#shared/aws/wire';

export interface QueuedMessage {
  /** Which worker handles it. */
  kind: 'webhook' | 'import' | 'planning';
  /** Epoch ms before which the message must not be handled. */
  not_before?: number;
  [key: string]: unknown;
}

export interface QueuePort {
  enqueue(message: QueuedMessage, delayMs: number): Promise<void>;
}

type Worker = (message: QueuedMessage) => Promise<void>;

const workers = new Map<QueuedMessage['kind'], Worker>();
const pending = new Set<Promise<void>>();

/** Locally, each kind of message is handled in-process by the worker registered for it. */
export function registerLocalWorker(kind: QueuedMessage['kind'], worker: Worker): void {
  workers.set(kind, worker);
}

export const localQueue: QueuePort = {
  async enqueue(message, delayMs) {
    const timer = setTimeout(
      () => {
        const worker = workers.get(message.kind);
        if (!worker) return;
        const run = worker(message).catch((error: unknown) =>
          console.error(`local ${message.kind} worker failed`, error),
        );
        pending.add(run);
        void run.finally(() => pending.delete(run));
      },
      Math.max(0, delayMs),
    );
    timer.unref();
  },
};

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
          MessageBody: JSON.stringify({ ...message, not_before: Date.now() + delayMs }),
          DelaySeconds: Math.min(900, Math.max(0, Math.ceil(delayMs / 1000))),
        }),
      );
    },
  };
}

let port: QueuePort | undefined;

export function queue(): QueuePort {
  if (!port) {
    const url = process.env['WORK_QUEUE_URL'];
    if (url) port = sqsQueue(url);
    else if (process.env['DISPATCH_LOCAL'] === '1') port = localQueue;
    else throw new Error('missing required environment variable WORK_QUEUE_URL');
  }
  return port;
}
