const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const COLON = 0x3a
const PAD = 0x3d

/**
 * The character codes of the last sequence made, kept for the next one of the same length (a
 * partition key is always 12 bytes): a new array per call was most of a partition key's garbage,
 * about 190 of its 230 bytes. Safe to share: it is filled and read within one synchronous call.
 */
let codes: number[] = []

/**
 * An RFC 9651 byte sequence, `:base64:`, of the first `length` of `bytes`: standard base64 with
 * padding (RFC 4648 §4). Written out because `btoa` takes strings and `Buffer` is Node-only; made
 * from character codes in one string, which leaves a tenth of the garbage of joining characters.
 */
export function byteSequence(bytes: Uint8Array, length = bytes.length): string {
  const size = 2 + Math.ceil(length / 3) * 4
  // Sized once: growing an array as it is filled leaves garbage on the way.
  if (codes.length !== size) codes = new Array<number>(size)
  codes[0] = COLON
  let at = 1
  for (let i = 0; i < length; i += 3) {
    const rest = length - i
    const bits =
      (bytes[i]! << 16) | (rest > 1 ? bytes[i + 1]! << 8 : 0) | (rest > 2 ? bytes[i + 2]! : 0)
    // Three bytes make four characters; one or two make two or three, then `=` padding.
    for (let sextet = 0; sextet < 4; sextet++) {
      codes[at++] = sextet <= rest ? ALPHABET.charCodeAt((bits >> (18 - sextet * 6)) & 63) : PAD
    }
  }
  codes[at] = COLON
  return String.fromCharCode.apply(undefined, codes)
}
