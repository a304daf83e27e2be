/**
 * Object keys a caller names (I4's `storage_upload_key`, I8's `object_key`). AWS S3 keeps a key literal, but other
 * S3-compatible servers resolve `.` and `..` segments (some after percent-decoding, some treating `\` as `/`), so
 * `uploads/<own org>/../<other org>/…` could name another organisation's object while its second segment reads as the
 * caller's own. Such keys are refused outright.
 */

export const UNSAFE_KEY_MESSAGE =
  'must be an object key without empty, `.` or `..` segments (percent-encoded or not), backslashes or control characters';

/** `segment` percent-decoded until nothing changes (at most a few rounds; a malformed escape stays as it is). */
function decodedSegment(segment: string): string {
  let current = segment;
  for (let round = 0; round < 4 && /%[0-9a-f]{2}/i.test(current); round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) break;
    current = next;
  }
  return current;
}

const hasControlCharacter = (text: string) =>
  [...text].some((c) => {
    const code = c.charCodeAt(0);
    return code < 32 || code === 127;
  });

/**
 * True when every `/`-separated segment of `key` is a plain name, even once percent-decoded: not empty, not only dots
 * and spaces (`.`, `..`, `...`, which some file-backed servers trim to `..`), no `/` or `\` inside.
 */
export function isSafeObjectKey(key: string): boolean {
  if (key.includes('\\') || hasControlCharacter(key)) return false;
  return key.split('/').every((segment) => {
    const decoded = decodedSegment(segment);
    return !/^[.\s]*$/.test(decoded) && !/[/\\]/.test(decoded) && !hasControlCharacter(decoded);
  });
}
