/** Standard base64's alphabet (RFC 4648 §4). */
export const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/**
 * Standard base64 with padding (RFC 4648 §4), as RFC 9651 byte sequences require. Written out
 * because `btoa` takes strings and `Buffer` is Node-only.
 */
export function base64(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out +=
      BASE64_ALPHABET[n >>> 18]! +
      BASE64_ALPHABET[(n >>> 12) & 63]! +
      BASE64_ALPHABET[(n >>> 6) & 63]! +
      BASE64_ALPHABET[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += `${BASE64_ALPHABET[n >>> 18]!}${BASE64_ALPHABET[(n >>> 12) & 63]!}==`
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += `${BASE64_ALPHABET[n >>> 18]!}${BASE64_ALPHABET[(n >>> 12) & 63]!}${BASE64_ALPHABET[(n >>> 6) & 63]!}=`
  }
  return out
}
