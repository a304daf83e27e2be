/** The one clock of the service. Tests move it with `setClock`; nothing else reads `Date.now()` directly. */
let current: () => number = () => Date.now();

export const clock = {
  nowMs: (): number => current(),
  nowIso: (): string => new Date(current()).toISOString(),
  nowEpochSeconds: (): number => Math.floor(current() / 1000),
};

export function setClock(fn: () => number): void {
  current = fn;
}

export function resetClock(): void {
  current = () => Date.now();
}

/** Normalises any valid ISO 8601 date-time (with offset) to UTC with milliseconds and `Z`. */
export function toUtcIso(value: string): string {
  return new Date(value).toISOString();
}
