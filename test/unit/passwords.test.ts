/**
 * Password hashes under a crowd (issue 55 item 10): in one process, concurrent hashes take turns and give the event
 * loop back between them, so the first sign-in of a crowd ends first and a timer (another request, a WebSocket frame)
 * is served before the crowd has finished. Orders only, never times.
 */
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../shared/auth/passwords.ts';

describe('password hashing under a crowd of sign-ins', () => {
  it('verifies a right password and refuses a wrong one or an unknown account', async () => {
    const hash = await hashPassword('a-good-long-password');
    expect(await verifyPassword('a-good-long-password', hash)).toBe(true);
    expect(await verifyPassword('another-password', hash)).toBe(false);
    expect(await verifyPassword('a-good-long-password', undefined)).toBe(false);
  });

  it('takes turns: each ends in arrival order, and the event loop serves a timer between two of them', async () => {
    const hash = await hashPassword('a-good-long-password');
    await verifyPassword('a-good-long-password', hash); // hash-wasm's first verification loads its WebAssembly
    const seen: string[] = [];
    let timer: Promise<void> | undefined;
    await Promise.all(
      [1, 2, 3, 4].map(async (n) => {
        await verifyPassword('a-good-long-password', hash);
        seen.push(`sign-in ${n}`);
        // Another request arriving as the first sign-in ends: it is served before the crowd is done.
        timer ??= new Promise<void>((fired) => setTimeout(() => fired(void seen.push('timer')), 0));
      }),
    );
    await timer;
    expect(seen.filter((s) => s !== 'timer')).toEqual(['sign-in 1', 'sign-in 2', 'sign-in 3', 'sign-in 4']);
    expect(seen.indexOf('timer')).toBeLessThan(seen.indexOf('sign-in 4'));
  });
});
