/**
 * The local host runs every function in one process; this says which function is running, so that what a function
 * does can be told apart from what another one does (the IAM proof in test/infra/iam-proof.test.ts records each AWS
 * call under the function that made it). A local adapter that stands in for an AWS call (the in-process queue for
 * SQS, the key file for Secrets Manager, AES-GCM for KMS, the outbox for SES) names the call it stands for.
 * In the cloud nothing here runs: no scope is set and nobody listens.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const running = new AsyncLocalStorage<string>();

/** Runs `work` as the function whose handler module is `handler` (relative to functions/, as in the route table). */
export const asFunction = <T>(handler: string, work: () => T): T => running.run(handler, work);

/** The handler module of the function running now (undefined outside the local host). */
export const runningFunction = (): string | undefined => running.getStore();

/** A local stand-in for an AWS call: `action` as IAM names it, `resource` one of the service's named resources. */
export interface StandInCall {
  action: string;
  resource: 'signingKeySecret' | 'pageTokenSecret' | 'secretBoxKey' | 'workQueue' | 'routeQueue' | 'mailIdentity';
}

let listener: ((call: StandInCall) => void) | undefined;

export function onStandInCall(listen: ((call: StandInCall) => void) | undefined): void {
  listener = listen;
}

export function standsFor(call: StandInCall): void {
  listener?.(call);
}
