/** A Content-Security-Policy header as its directives: `script-src 'self'` → `script-src` → `["'self'"]`. */
export function cspDirectives(policy: string | null | undefined): Map<string, string[]> {
  return new Map(
    (policy ?? '').split(';').map((directive) => {
      const [name, ...sources] = directive.trim().split(/\s+/);
      return [name!, sources];
    }),
  );
}
