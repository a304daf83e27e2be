/**
 * Reads until `done` holds or `ms` have passed, every `everyMs`; answers the last value read either way, so the
 * caller's expectation on it says what was seen.
 */
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  ms = 30_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
