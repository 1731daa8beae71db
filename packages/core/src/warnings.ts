/** Where the limiter reports what an operator should know. `globalThis.console` fits. */
export type Logger = {
  /** Receives one warning, already formatted as `[tollgate] CODE: message`. */
  warn(message: string): void
}

/**
 * Stable codes for configurations that are legal but probably wrong. Each is reported at most
 * once per resolver or responder instance. Listed with their meaning in
 * docs/concepts/keys-and-proxies.md, docs/concepts/headers.md and docs/reference/error-codes.md.
 */
export type WarningCode =
  /** `trustProxy: true`, or ranges covering every IPv4 or IPv6 address: any client picks its key. */
  | 'WARN_TRUST_ALL_PROXIES'
  /** Forwarding headers arrived while no proxy is trusted: behind a proxy, every client shares its key. */
  | 'WARN_FORWARDED_HEADERS_IGNORED'
  /** A request came through fewer forwarding hops than `trustProxy: n`: its left-most address may be forged. */
  | 'WARN_HOP_COUNT_EXCEEDS_CHAIN'
  /** The adapter gave no usable socket address, so the request has no `ip` identity. */
  | 'WARN_CLIENT_ADDRESS_UNKNOWN'
  /** `ipv6Prefix` above 64: one host, which usually owns a whole /64, can rotate addresses. */
  | 'WARN_IPV6_UNMASKED'
  /** The app's `onShadowDenied` hook threw or rejected; the request went on. */
  | 'WARN_ON_SHADOW_DENIED_THREW'
  /** A request's header list may have been cut (Node's `maxHeadersCount`): its forwarding headers were not trusted. */
  | 'WARN_HEADERS_TRUNCATED'
  /**
   * Many middleware were each made and used for one request: a limiter built inside a request
   * handler starts empty every time and never limits. Once per process.
   */
  | 'WARN_LIMITER_PER_REQUEST'
  /** A response settled by `settleFrom` reported no cost (none found, or its body too large): its estimate stands. */
  | 'WARN_SETTLE_NO_COST'
  /** Reading a response's cost threw, or gave a cost the limiter refused: its estimate stands. */
  | 'WARN_SETTLE_READ_FAILED'

/** Where warnings go, and which to skip. */
export type WarningOptions = {
  /**
   * Receives each warning once, as `[tollgate] CODE: message`. `false` silences every warning.
   * @default globalThis.console
   */
  readonly logger?: Logger | false | undefined
  /** Codes to never report, for a setup you have checked (e.g. a directly exposed app). @default [] */
  readonly ignoreWarnings?: readonly WarningCode[] | undefined
}

/** Reports a code the first time it is raised, and never again for this instance. */
export type WarnOnce = (code: WarningCode, message: string) => void

/** How many distinct lines are remembered; past it the memory starts over. */
const REMEMBERED = 100

/** A reporter with its own memory of what it has reported, for one resolver or responder. */
export function createWarnOnce(options: WarningOptions = {}): WarnOnce {
  const logger = options.logger === undefined ? defaultLogger() : options.logger
  return onceWarner(logger, false, options.ignoreWarnings)
}

/**
 * The one once-only warner: each code once, and the `ignored` ones never (a resolver's or a
 * responder's); or, `byLine` (the limiter's reporter), each distinct line once, up to
 * `REMEMBERED` lines. A logger that throws is ignored.
 */
export function onceWarner<Code extends string>(
  logger: Logger | false,
  byLine: boolean,
  ignored?: Iterable<string>,
): (code: Code, message: string) => void {
  const warned = new Set(ignored)
  return (code, message) => {
    const line = `[tollgate] ${code}: ${message}`
    const seen = byLine ? line : code
    if (logger === false || warned.has(seen)) return
    // Codes are few, and forgetting them would forget the ignored ones too.
    if (byLine && warned.size >= REMEMBERED) warned.clear()
    warned.add(seen)
    try {
      logger.warn(line)
    } catch {
      // A broken logger must not turn a request into an error.
    }
  }
}

/** `globalThis.console` where there is one (every runtime we know), else nothing. */
export function defaultLogger(): Logger | false {
  // Core is compiled without DOM or Node types, so the global console is reached structurally.
  const console = (globalThis as { console?: Partial<Logger> }).console
  return typeof console?.warn === 'function' ? (console as Logger) : false
}
