/**
 * A read-check-write judged against what is current. The code under test read an item, judged a move legal from what
 * it read and writes the move on the condition that the item is still as read; when another writer came between (a
 * worker moving a job on while a request fails or cancels it), that condition fails. Answering 409 then would refuse
 * a move that may still be legal: `moveCurrent` reads the item again (consistently) and hands it to `write`, which
 * judges the move against it (throwing its own 409, about the current state, when the move is illegal from there) and
 * writes conditioned on it. Bounded: after `MOVE_TRIES` writes lost to other writers, `contended()` is thrown.
 */
import { isConditionalFailure } from '#shared/db/client';

export const MOVE_TRIES = 5;

export async function moveCurrent<T, R>(
  read: T,
  write: (current: T, reread: boolean) => Promise<R>,
  options: {
    /** Reads the item again, consistently; undefined when it is gone. */
    reread: () => Promise<T | undefined>;
    /** The item is gone. */
    gone: () => Error;
    /** Every try lost to another writer. */
    contended: () => Error;
  },
): Promise<R> {
  let current = read;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write(current, attempt > 1);
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      if (attempt >= MOVE_TRIES) throw options.contended();
      const latest = await options.reread();
      if (!latest) throw options.gone();
      current = latest;
    }
  }
}
