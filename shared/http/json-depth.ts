/**
 * How deep a JSON text nests, found by one pass over its characters before anything parses or walks it: the checks
 * that follow a parse (schemas, the Unicode check) recurse, and a body nested tens of thousands of levels deep would
 * exhaust their stack. No operation's body nests more than a few levels; 64 leaves room for any client.
 */
export const MAX_JSON_DEPTH = 64;

/** True when arrays and objects in `text` nest deeper than `limit` (strings and their escapes are skipped). */
export function nestsDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}
