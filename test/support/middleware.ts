/**
 * A hook into the functions' DynamoDB client for one call of a test: to interleave another writer between two reads
 * of the code under test, or to change what DynamoDB answered. Real calls to the emulator still run underneath.
 */
import { db } from '../../shared/db/client.ts';

type Args = { input: object };
export type Middleware = (
  next: (args: Args) => Promise<unknown>,
  context: { commandName?: string },
) => (args: Args) => Promise<unknown>;

/** Runs `body` with `middleware` on the client (before the SDK marshals: `args.input` is the command's), then off. */
export async function withMiddleware<T>(name: string, middleware: Middleware, body: () => Promise<T>): Promise<T> {
  db().middlewareStack.add(middleware as never, { step: 'initialize', name });
  try {
    return await body();
  } finally {
    db().middlewareStack.remove(name);
  }
}
