import type { HeaderAccessor } from '../headers/types.js'

/** Requests whose forwarding headers are all looked at, from the start. */
const ALL_CHECKED = 1024
/** Then one request in this many: a power of two, so `count & (ONE_IN - 1)` picks it. */
const ONE_IN = 64

/**
 * The check behind `WARN_FORWARDED_HEADERS_IGNORED` for a resolver that trusts no proxy: calls
 * `warn` once, for a request that carries `X-Forwarded-For` or `Forwarded`. Every one of the
 * first 1,024 requests is looked at, then one in 64: behind a proxy every request carries the
 * header, so it is seen at once, while an app that faces clients directly stops reading two
 * headers a request for a warning that never comes.
 */
export function forwardingHeaderCheck(warn: () => void): (header: HeaderAccessor) => void {
  // Requests counted up to ALL_CHECKED + ONE_IN, then round from ALL_CHECKED + 1, so the
  // count stays small; below zero once warned.
  let count = 0
  return function checkForwardingHeaders(header) {
    if (count < 0) return
    count = count < ALL_CHECKED + ONE_IN ? count + 1 : ALL_CHECKED + 1
    if (count > ALL_CHECKED && (count & (ONE_IN - 1)) !== 0) return
    if ((header('x-forwarded-for') ?? header('forwarded')) === undefined) return
    count = -1
    warn()
  }
}
