import type { HeaderAccessor } from '../headers/types.js'

/**
 * The check behind `WARN_FORWARDED_HEADERS_IGNORED` for a resolver that trusts no proxy: calls
 * `warn` once, for a request that carries `X-Forwarded-For` or `Forwarded`. Every one of the
 * first 1,024 requests is looked at, then one in 64: behind a proxy every request carries the
 * header, so it is seen at once, while an app that faces clients directly stops reading two
 * headers a request for a warning that never comes.
 */
export function forwardingHeaderCheck(warn: () => void): (header: HeaderAccessor) => void {
  // Requests counted up to 1,088, then from 1,025 again; below zero once warned.
  let count = 0
  return function checkForwardingHeaders(header) {
    if (count < 0) return
    count = count < 1088 ? count + 1 : 1025
    if (count > 1024 && (count & 63) !== 0) return
    if ((header('x-forwarded-for') ?? header('forwarded')) === undefined) return
    count = -1
    warn()
  }
}
