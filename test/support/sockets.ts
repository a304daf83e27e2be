/**
 * A WebSocket to a started host as an app holds it: every frame received, how the server closed it, and a wait on
 * either. The tests of real-time channels share it.
 */
import WebSocket from 'ws';

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
  socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
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
