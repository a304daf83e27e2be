/**
 * A WebSocket to a started host as an app holds it: every frame received, how the server closed it, and a wait on
 * either. The tests of real-time channels share it. Every event frame received is checked against the events the
 * service declares (`shared/notifications/events.ts`, closed: a member they do not name fails too), the same
 * definitions the client's event types are generated from; a mismatch fails the test file that received it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, expect } from 'vitest';
import WebSocket from 'ws';
import { eventsDocument } from '../../lib/openapi.ts';
import { channelKind } from '../../shared/notifications/events.ts';

const document = eventsDocument();
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction | null>();
const mismatches: string[] = [];
let checkedEvents = 0;

function validatorOf(kind: keyof typeof document.components.schemas, name: string): ValidateFunction | null {
  const key = `${kind}:${name}`;
  if (!validators.has(key)) {
    const schema = (document.components.schemas[kind]?.['properties'] as Record<string, object> | undefined)?.[name];
    validators.set(key, schema ? ajv.compile(schema) : null);
  }
  return validators.get(key)!;
}

/** What is wrong with an event frame as its channel declares it; undefined when it is fine (or not the service's). */
export function eventMismatch(frame: Frame): string | undefined {
  if (frame.type !== 'event' || !frame.channel || !frame.name) return undefined;
  const channel = channelKind(frame.channel);
  if (!channel) return undefined;
  const validate = validatorOf(channel.kind, frame.name);
  if (!validate) return channel.closed ? `${frame.name} on ${frame.channel} is not a declared event` : undefined;
  checkedEvents++;
  if (validate(frame.data)) return undefined;
  return `${frame.name} on ${frame.channel}: ${ajv.errorsText(validate.errors, { dataVar: 'data' })} in ${JSON.stringify(frame.data)}`;
}

afterAll(() => {
  if (checkedEvents > 0) console.log(`${checkedEvents} event frames checked against shared/notifications/events.ts`);
  expect(mismatches, 'event frames that differ from their declaration').toEqual([]);
});

export type Frame = {
  type: string;
  channel?: string;
  channels?: string[];
  code?: string;
  message?: string;
  name?: string;
  id?: string;
  data?: Record<string, unknown>;
};

/** Connects with `token` (rejects with `refused with <status>` when the handshake is refused). */
export async function openSocket(hostUrl: string, token: string) {
  const socket = new WebSocket(`${hostUrl.replace(/^http/, 'ws')}/ws?token=${token}`);
  const frames: Frame[] = [];
  const closed: { code?: number } = {};
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as Frame;
    const mismatch = eventMismatch(frame);
    if (mismatch) mismatches.push(mismatch);
    frames.push(frame);
  });
  socket.on('close', (code) => {
    closed.code = code;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
    socket.once('error', reject);
  });
  /** Waits until `done` holds or `ms` passed; answers whether it holds. */
  const when = async (done: () => boolean, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    return done();
  };
  return {
    socket,
    frames,
    closed,
    when,
    subscribe: (channels: string[]) => socket.send(JSON.stringify({ action: 'subscribe', channels })),
    /** The event frames named `name`, in arrival order. */
    events: (name: string) => frames.filter((f) => f.type === 'event' && f.name === name),
  };
}
