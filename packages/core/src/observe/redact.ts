/** How an explanation shows client keys: hashed (the default), redacted, or as they are. */
export type KeyDisplay = 'hashed' | 'redacted' | 'revealed'

/**
 * A key as `display` says: `ip:203.0.113.7` becomes `ip:#5b1c0e9a` (hashed), `ip:***`
 * (redacted) or stays itself (revealed). The identity names stay: they are the rule's, not the
 * client's. The hash is FNV-1a over a salt drawn once per process: the same key hashes the same
 * within a process, so requests can be told apart and followed, but a hash cannot be looked up
 * or tried against every IPv4 address without the salt, which never leaves the process.
 */
export function displayKey(key: string | undefined, display: KeyDisplay): string | undefined {
  if (key === undefined || display === 'revealed') return key
  return `${identityNamesOf(key).join('&')}:${display === 'hashed' ? `#${hash(key)}` : '***'}`
}

/**
 * The identity names a limiter key was built from (see `keyOf`): `name:value` for one,
 * `name#length:value` joined by `&` for several; the lengths say where each value ends.
 */
export function identityNamesOf(key: string): string[] {
  const colon = key.indexOf(':')
  const mark = key.indexOf('#')
  if (mark < 0 || (colon >= 0 && colon < mark)) return [key.slice(0, Math.max(0, colon))]
  const names: string[] = []
  let at = 0
  while (at < key.length) {
    const hashAt = key.indexOf('#', at)
    const colonAt = key.indexOf(':', hashAt)
    const length = Number(key.slice(hashAt + 1, colonAt))
    if (hashAt < 0 || colonAt < 0 || !Number.isSafeInteger(length)) break
    names.push(key.slice(at, hashAt))
    at = colonAt + 1 + length + 1
  }
  return names
}

const SALT = Math.random().toString(36).slice(2)

function hash(text: string): string {
  let h = 0x811c9dc5
  const salted = SALT + text
  for (let i = 0; i < salted.length; i++) {
    h ^= salted.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}
