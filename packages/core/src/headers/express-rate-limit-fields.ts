import { byteSequence } from './byte-sequence.js'
import { sha256 } from './sha256.js'

/**
 * The rate-limit fields in express-rate-limit's dialect, for a middleware that must send what
 * express-rate-limit sends, byte for byte (`@tollgate/express-rate-limit`). It differs from
 * Tollgate's own families in small ways that clients of an existing API may depend on: window
 * seconds rounded up rather than rescaled, a reset of 0 once a window has ended, `; ` between
 * the parameters of the draft-8 items, a `Date` field beside `X-RateLimit-Reset`, and a
 * partition key made from the hex digest of the key.
 */

/** The IETF drafts the dialect writes. */
export type ExpressRateLimitDraft = 'draft-6' | 'draft-7' | 'draft-8'

/** What one response describes: the key's quota, what is left of it and when it resets. */
export type ExpressRateLimitFigures = {
  readonly limit: number
  readonly remaining: number
  /** When the key's window ends, in ms since the epoch; undefined when the store did not say. */
  readonly resetAt: number | undefined
  readonly windowMs: number
  /** The time the fields are written at, in ms since the epoch. */
  readonly now: number
}

/**
 * Where the fields go: `set` replaces a field (every field but draft-8's), `append` adds a list
 * member (draft-8's `RateLimit` and `RateLimit-Policy`, one per middleware).
 */
export type ExpressRateLimitFieldSink = {
  /** Sets a field, replacing any value it had. */
  set(name: string, value: string): void
  /** Adds a value to a field, as one more list member. */
  append(name: string, value: string): void
}

/** Whole seconds until the window ends, never negative; the window itself when unknown. */
export function expressRateLimitResetSeconds(figures: ExpressRateLimitFigures): number {
  const { resetAt, now, windowMs } = figures
  if (resetAt === undefined) return Math.ceil(windowMs / 1000)
  return Math.max(0, Math.ceil((resetAt - now) / 1000))
}

/** An HTTP date (`Date`), made once per second: every response of that second sends the same. */
function createHttpDate(): (now: number) => string {
  let second = Number.NaN
  let text = ''
  return (now) => {
    const at = Math.floor(now / 1000)
    if (at !== second) {
      second = at
      text = new Date(now).toUTCString()
    }
    return text
  }
}

const HEX = '0123456789abcdef'

/**
 * express-rate-limit's draft-8 partition key: the first 12 hex digits of the key's SHA-256,
 * base64-encoded as text, in a byte sequence (`:…:`). The last key's value is kept.
 */
function createPartitionKey(): (key: string) => string {
  const digest = new Uint8Array(32)
  const text = new Uint8Array(12)
  let lastKey: string | undefined
  let lastValue = ''
  return (key) => {
    if (key === lastKey) return lastValue
    sha256(key, digest)
    for (let i = 0; i < 6; i++) {
      text[2 * i] = HEX.charCodeAt(digest[i]! >> 4)
      text[2 * i + 1] = HEX.charCodeAt(digest[i]! & 15)
    }
    lastValue = byteSequence(text)
    lastKey = key
    return lastValue
  }
}

/** Writes one middleware's fields; one writer per middleware (it keeps per-second caches). */
export type ExpressRateLimitFieldWriter = {
  /** `X-RateLimit-Limit`, `-Remaining`, and with a known reset `Date` and `X-RateLimit-Reset`. */
  legacy(sink: ExpressRateLimitFieldSink, figures: ExpressRateLimitFigures): void
  /** The draft's fields; `name` and `key` are read by draft-8 only (policy name, `pk`). */
  standard(
    sink: ExpressRateLimitFieldSink,
    draft: ExpressRateLimitDraft,
    figures: ExpressRateLimitFigures,
    name: string,
    key: string,
  ): void
  /** `Retry-After`: the seconds given, or those until the window ends. */
  retryAfter(
    sink: ExpressRateLimitFieldSink,
    figures: ExpressRateLimitFigures,
    seconds?: number,
  ): void
}

/**
 * A writer of express-rate-limit's fields.
 * @example
 * const fields = createExpressRateLimitFieldWriter()
 * fields.legacy(sink, { limit: 5, remaining: 4, resetAt: now + 60_000, windowMs: 60_000, now })
 */
export function createExpressRateLimitFieldWriter(): ExpressRateLimitFieldWriter {
  const httpDate = createHttpDate()
  const partitionKey = createPartitionKey()
  return {
    legacy(sink, figures) {
      sink.set('X-RateLimit-Limit', String(figures.limit))
      sink.set('X-RateLimit-Remaining', String(figures.remaining))
      if (figures.resetAt === undefined) return
      sink.set('Date', httpDate(figures.now))
      sink.set('X-RateLimit-Reset', String(Math.ceil(figures.resetAt / 1000)))
    },
    standard(sink, draft, figures, name, key) {
      const w = Math.ceil(figures.windowMs / 1000)
      const reset = expressRateLimitResetSeconds(figures)
      const { limit, remaining } = figures
      if (draft === 'draft-8') {
        sink.append('RateLimit', `"${name}"; r=${remaining}; t=${reset}`)
        sink.append('RateLimit-Policy', `"${name}"; q=${limit}; w=${w}; pk=${partitionKey(key)}`)
        return
      }
      sink.set('RateLimit-Policy', `${limit};w=${w}`)
      if (draft === 'draft-7') {
        sink.set('RateLimit', `limit=${limit}, remaining=${remaining}, reset=${reset}`)
        return
      }
      sink.set('RateLimit-Limit', String(limit))
      sink.set('RateLimit-Remaining', String(remaining))
      sink.set('RateLimit-Reset', String(reset))
    },
    retryAfter(sink, figures, seconds) {
      sink.set('Retry-After', String(seconds ?? expressRateLimitResetSeconds(figures)))
    },
  }
}
