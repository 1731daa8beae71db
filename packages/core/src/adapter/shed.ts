import type { Clock } from '../clock.js'
import { closest } from '../closest-name.js'
import { retryAfterSeconds } from '../headers/families.js'
import type { HeaderEntries } from '../headers/types.js'
import {
  compilePattern,
  matchesAny,
  normalizePath,
  type PathPattern,
} from '../limiter/path-pattern.js'
import {
  checkFunction,
  checkOneOf,
  checkWhole,
  invalidOption,
  shown,
} from '../options/option-values.js'
import { loadShedProblem, PROBLEM_CONTENT_TYPE } from '../response/problem.js'
import type { Denial } from '../response/responder.js'
import { type ParsedRoute, parseRoute } from '../rules/route.js'

/** Why a request was shed. */
export type ShedReason = 'in-flight' | 'event-loop-delay' | 'unhealthy'

/** What `onShed` hears: why, whether the request was critical, and whether it was let through. */
export type ShedEvent = {
  readonly reason: ShedReason
  readonly critical: boolean
  /** True in shadow mode: the request was let through. */
  readonly shadow: boolean
}

/**
 * A process-wide guard in front of the rules: it refuses work (503, `Retry-After`, problem type
 * `temporary-reduced-capacity`) before it piles up. Any of the signals may be given.
 */
export type ShedOptions<Req> = {
  /** Shed once this many requests of this middleware are in flight (critical ones: see below). */
  readonly maxInFlight?: number | undefined
  /**
   * Shed while the event loop lags more than this (ms), turning off again only once it is back
   * under `(1 − hysteresis) ×` this. Node adapters read Node's `monitorEventLoopDelay` unless
   * `eventLoopDelay` is given; runtimes without one need `eventLoopDelay` (or use in-flight).
   */
  readonly maxEventLoopDelayMs?: number | undefined
  /** The event-loop delay now, in ms (`eventLoopDelay()` from `@tollgate/core/node`, or a test's). */
  readonly eventLoopDelay?: (() => number) | undefined
  /** Your own probe (a database pool's health…): shed while it returns false. */
  readonly healthy?: (() => boolean) | undefined
  /** How often the delay and the probe are read, in ms, against the limiter's clock. @default 500 */
  readonly sampleEveryMs?: number | undefined
  /**
   * How far under `maxEventLoopDelayMs` the delay must fall before shedding stops, as a fraction
   * of it, so that shedding does not flap at every sample. @default 0.2
   */
  readonly hysteresis?: number | undefined
  /**
   * Requests shed last: routes (`'POST /v1/payments'`, `'/health/*'`) or a predicate. While the
   * process is overloaded only other requests are shed; in flight, the last `criticalShare` of
   * `maxInFlight` is kept for critical ones. @default none
   */
  readonly critical?: readonly string[] | ((req: Req) => boolean) | undefined
  /** The share of `maxInFlight` only critical requests may use, 0 to 1. @default 0.2 */
  readonly criticalShare?: number | undefined
  /** `shadow` lets every request through and reports what would have been shed. @default 'enforce' */
  readonly mode?: 'enforce' | 'shadow' | undefined
  /** What refusals tell clients to wait (`Retry-After`), in ms. @default 1000 */
  readonly retryAfterMs?: number | undefined
  /** Hears every request that is (or in shadow mode would have been) shed. */
  readonly onShed?: ((event: ShedEvent, req: Req) => void) | undefined
}

/**
 * What `loadShedder` returns, for an adapter's `shed` option: bound by each middleware to its
 * clock and its runtime's event-loop delay signal.
 */
export type LoadShedder<Req = unknown> = {
  /**
   * Called by the adapter kit, once per middleware, with its clock and event-loop delay signal. Not
   * for application code.
   */
  readonly bind: (clock: Clock, runtimeDelay: (() => () => number) | undefined) => Shedder<Req>
}

/**
 * One middleware's shedder: `refuse` before the rules, and, when it counts requests in flight,
 * `over` once each request it let through is over.
 */
export type Shedder<Req> = {
  /** The denial for a request to shed now, else undefined (and the request counts in flight). */
  refuse(req: Req, method: string, path: string): Denial | undefined
  /**
   * Hears, once, that an exchange is over (answered, ended, aborted or refused); one it shed
   * (answered with its own denial) was never counted. Undefined when nothing is counted: the
   * kit then has no end to watch for it.
   */
  readonly over: ((exchange: { readonly denial: Denial | undefined }) => void) | undefined
}

const SHED_OPTIONS = [
  'maxInFlight',
  'maxEventLoopDelayMs',
  'eventLoopDelay',
  'healthy',
  'sampleEveryMs',
  'hysteresis',
  'critical',
  'criticalShare',
  'mode',
  'retryAfterMs',
  'onShed',
]

/**
 * Load shedding for an adapter's `shed` option: a process-wide guard in front of the rules that
 * refuses work with a 503 while the process is overloaded. Every option is checked here, at
 * start-up. Its own module, reached only by apps that call it: a bundle without shedding holds
 * none of it.
 * @example rateLimit(rules, { shed: loadShedder({ maxEventLoopDelayMs: 200, critical: ['POST /v1/payments'] }) })
 */
export function loadShedder<Req = unknown>(options: ShedOptions<Req>): LoadShedder<Req> {
  const checked = checkShedOptions(options)
  return { bind: (clock, runtimeDelay) => createShedder(checked, clock, runtimeDelay) }
}

/** A middleware's shedder. `nodeDelay` is the runtime's event-loop delay signal, if it has one. */
function createShedder<Req>(
  o: ShedOptions<Req>,
  clock: Clock,
  nodeDelay: (() => () => number) | undefined,
): Shedder<Req> {
  const maxInFlight = o.maxInFlight
  const maxDelay = o.maxEventLoopDelayMs
  const delay = maxDelay === undefined ? undefined : (o.eventLoopDelay ?? nodeDelay?.())
  if (maxDelay !== undefined && delay === undefined) {
    throw invalidOption(
      'shed.eventLoopDelay',
      'this runtime has no event-loop delay signal: give one, or shed on maxInFlight',
    )
  }
  const share = o.criticalShare ?? 0.2
  const nonCriticalLimit =
    maxInFlight === undefined ? undefined : Math.floor(maxInFlight * (1 - share))
  const every = o.sampleEveryMs ?? 500
  const offBelow = maxDelay === undefined ? 0 : maxDelay * (1 - (o.hysteresis ?? 0.2))
  const isCritical = criticalTest(o.critical)
  const shadow = o.mode === 'shadow'
  const denial = shedDenial(retryAfterSeconds(o.retryAfterMs ?? 1000))
  let inFlight = 0
  let sampledAt = Number.NEGATIVE_INFINITY
  let lagging = false
  let unhealthy = false

  /** Reads the signals at most once per `sampleEveryMs`; the delay turns off under `offBelow`. */
  function sample(): void {
    const now = clock.now()
    if (now - sampledAt < every) return
    sampledAt = now
    if (delay !== undefined) {
      const lag = delay()
      lagging = lagging ? lag > offBelow : lag > maxDelay!
    }
    if (o.healthy !== undefined) unhealthy = o.healthy() === false
  }

  function reasonToShed(critical: boolean): ShedReason | undefined {
    if (maxInFlight !== undefined && inFlight >= (critical ? maxInFlight : nonCriticalLimit!))
      return 'in-flight'
    if (critical) return undefined
    sample()
    if (lagging) return 'event-loop-delay'
    return unhealthy ? 'unhealthy' : undefined
  }

  return {
    refuse(req, method, path) {
      const critical = isCritical(req, method, path)
      const reason = reasonToShed(critical)
      if (reason !== undefined) {
        o.onShed?.({ reason, critical, shadow }, req)
        if (!shadow) return denial
      }
      inFlight++
      return undefined
    },
    over:
      maxInFlight === undefined
        ? undefined
        : (exchange) => {
            if (exchange.denial !== denial) inFlight--
          },
  }
}

function criticalTest<Req>(
  critical: ShedOptions<Req>['critical'],
): (req: Req, method: string, path: string) => boolean {
  if (critical === undefined) return () => false
  if (typeof critical === 'function') return (req) => critical(req) === true
  const routes = critical.map((text) => parseRoute(text) as ParsedRoute)
  const byMethod = (method: string | undefined) =>
    routes.filter((route) => route.method === undefined || route.method === method)
  const patterns = new Map<string, PathPattern[]>()
  return (_req, method, path) => {
    let list = patterns.get(method)
    if (list === undefined) {
      list = byMethod(method).map(compilePattern)
      if (patterns.size < 64) patterns.set(method, list)
    }
    return list.length > 0 && matchesAny(list, normalizePath(path))
  }
}

function shedDenial(retryAfter: number): Denial {
  const problem = loadShedProblem(retryAfter)
  const headers: HeaderEntries = [
    ['Retry-After', String(retryAfter)],
    ['Content-Type', PROBLEM_CONTENT_TYPE],
  ]
  return { allowed: false, status: 503, headers, body: JSON.stringify(problem), problem }
}

type Checked<Req> = ShedOptions<Req>

function checkShedOptions<Req>(options: ShedOptions<Req>): Checked<Req> {
  if (typeof options !== 'object' || options === null) {
    throw invalidOption('shed', 'expected an object such as { maxInFlight: 100 }')
  }
  for (const name of Object.keys(options)) {
    if (SHED_OPTIONS.includes(name)) continue
    const guess = closest(name, SHED_OPTIONS)
    const hint =
      guess === undefined ? `known: ${SHED_OPTIONS.join(', ')}` : `did you mean "${guess}"?`
    throw invalidOption(`shed.${name}`, `unknown option (${hint})`)
  }
  for (const name of [
    'maxInFlight',
    'maxEventLoopDelayMs',
    'sampleEveryMs',
    'retryAfterMs',
  ] as const) {
    if (options[name] !== undefined) checkWhole(`shed.${name}`, options[name], { min: 1 })
  }
  for (const name of ['hysteresis', 'criticalShare'] as const) {
    const value = options[name]
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && value < 1))
      throw invalidOption(
        `shed.${name}`,
        `expected a fraction from 0 to below 1, got ${shown(value)}`,
      )
  }
  for (const name of ['eventLoopDelay', 'healthy', 'onShed'] as const) {
    if (options[name] !== undefined) checkFunction(`shed.${name}`, options[name])
  }
  if (options.mode !== undefined) checkOneOf('shed.mode', options.mode, ['enforce', 'shadow'])
  const critical = options.critical
  if (critical !== undefined && typeof critical !== 'function') {
    if (!Array.isArray(critical))
      throw invalidOption('shed.critical', 'expected routes or a function')
    for (const route of critical) {
      const parsed = parseRoute(route)
      if (typeof parsed === 'string') throw invalidOption('shed.critical', parsed)
    }
  }
  if (
    options.maxInFlight === undefined &&
    options.maxEventLoopDelayMs === undefined &&
    options.healthy === undefined
  ) {
    throw invalidOption('shed', 'give at least one of maxInFlight, maxEventLoopDelayMs, healthy')
  }
  return options
}
