/**
 * DynamoDB's number range, for every reader of numbers a caller sends (a JSON body, a CSV row): a number outside it
 * is refused where it is read, at its path or column, never left to fail the write (a 500, or an import that loses
 * its good rows). DynamoDB stores 0 and magnitudes from 1E-130 to about 1E+126 ("Number underflow" below); the
 * document client refuses a magnitude above Number.MAX_SAFE_INTEGER (it would lose digits), so that is the ceiling.
 */

/** The smallest non-zero magnitude DynamoDB stores. */
export const MIN_STORED_MAGNITUDE = 1e-130;

/** The largest magnitude the document client writes as it is. */
export const MAX_STORED_MAGNITUDE = Number.MAX_SAFE_INTEGER;

export const UNSTORABLE_NUMBER = `must be 0 or between ${MIN_STORED_MAGNITUDE} and ${MAX_STORED_MAGNITUDE} in magnitude`;

/** Whether DynamoDB (through the document client) stores `n` exactly as it is. */
export const isStorableNumber = (n: number): boolean =>
  n === 0 || (Math.abs(n) >= MIN_STORED_MAGNITUDE && Math.abs(n) <= MAX_STORED_MAGNITUDE);
