/**
 * Redis Cluster's key → slot mapping: CRC16 (XMODEM) of the hash tag, modulo 16384. The store
 * uses it to group a request's keys by slot, so that each group can be one script call.
 */
const TABLE = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  let crc = i << 8
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1
  TABLE[i] = crc & 0xffff
}

const encoder = new TextEncoder()

/** The cluster slot of a hash tag's contents (the text between `{` and `}`). */
export function slotOfTag(tag: string): number {
  let crc = 0
  for (const byte of encoder.encode(tag)) {
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!
  }
  return crc % 16384
}
