import { checkFunction, checkWhole, invalidOption, shown } from '../../options/option-values.js'
import { refuseUnknownOptions } from '../../options/unknown-options.js'
import type { Logger } from '../../warnings.js'
import type { MemoryStoreOptions } from '../memory-store.js'

/** An outage of the shared store began (its first failure) or ended (local admissions charged). */
export type OutageEvent =
  | {
      readonly type: 'start'
      /** The time of the first failure, ms (the limiter's clock). */
      readonly at: number
      /** The number of live instances each fallback rule's allowance is divided by. */
      readonly instances: number
      readonly error: unknown
    }
  | {
      readonly type: 'end'
      readonly at: number
      readonly startedAt: number
      /** Requests decided in this process during the outage. */
      readonly degraded: number
      /** Calls that charged the shared store a rule and key's local admissions. */
      readonly reconciled: number
      /** Rule and key pairs whose admissions were not recorded (the ledger was full, `maxKeys`). */
      readonly unreconciled: number
    }

/**
 * Options of `fallbackStore`: how many instances share the rules, and when to give up on the shared
 * store and try it again.
 */
export type FallbackStoreOptions = {
  /**
   * How many instances share the rules: each decides, while the shared store fails, with
   * 1/instances of each fallback rule's allowance. A number, or a function read when an outage
   * starts (and kept through it), such as `redisMembership(...).count`, which counts the
   * instances that keep a heartbeat in Redis.
   */
  readonly instances: number | (() => number)
  /** Failed calls in a row that open the circuit (stop calling the store). @default 3 */
  readonly failures?: number
  /**
   * While the circuit is open, one request every `probeIntervalMs` goes to the shared store; when
   * it answers, decisions return to the store once the local admissions are charged to it.
   * Shorter finds a recovered store sooner; longer spends fewer requests on a dead one.
   * @default 1000
   */
  readonly probeIntervalMs?: number
  /**
   * Rule and key pairs whose local admissions are remembered to be charged on recovery; past it
   * an outage's further keys are decided locally but not reconciled (counted in `stats()`).
   * @default 100_000
   */
  readonly maxKeys?: number
  /** The local memory store's own options (`maxBytes`, `maxKeys`). */
  readonly local?: MemoryStoreOptions
  /**
   * Logs each outage's start and end, once each, as `[tollgate] WARN_STORE_OUTAGE` and
   * `WARN_STORE_RECOVERED`; `false` for none. @default console
   */
  readonly logger?: Logger | false
  /** Called at each outage's start and end (for an alert); what it throws is ignored. */
  readonly onOutage?: (event: OutageEvent) => void
}

export type ResolvedFallbackOptions = {
  readonly instances: () => number
  readonly failures: number
  readonly probeIntervalMs: number
  readonly maxKeys: number
  readonly local: MemoryStoreOptions
  readonly logger: Logger | false
  readonly onOutage: ((event: OutageEvent) => void) | undefined
}

const WHERE = 'fallbackStore()'
const KNOWN = [
  'instances',
  'failures',
  'probeIntervalMs',
  'maxKeys',
  'local',
  'logger',
  'onOutage',
] as const

/** Every option checked once, at construction; a bad one is refused naming it. */
export function resolveFallbackOptions(options: FallbackStoreOptions): ResolvedFallbackOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalidOption('options', `expected an object, got ${shown(options)}`, WHERE)
  }
  refuseUnknownOptions(options, KNOWN, WHERE)
  const given = options.instances
  let instances: () => number
  if (typeof given === 'function') instances = given
  else {
    const count = checkWhole('instances', given, { min: 1 }, WHERE)
    instances = () => count
  }
  const logger = options.logger ?? defaultLogger()
  if (logger !== false && typeof logger?.warn !== 'function') {
    throw invalidOption(
      'logger',
      `expected { warn(message) } or false, got ${shown(logger)}`,
      WHERE,
    )
  }
  if (options.onOutage !== undefined) checkFunction('onOutage', options.onOutage, WHERE)
  const local = options.local ?? {}
  if (typeof local !== 'object' || local === null) {
    throw invalidOption('local', `expected memoryStore options, got ${shown(local)}`, WHERE)
  }
  return {
    instances,
    failures: checkWhole('failures', options.failures ?? 3, { min: 1, max: 1000 }, WHERE),
    probeIntervalMs: checkWhole(
      'probeIntervalMs',
      options.probeIntervalMs ?? 1000,
      { min: 1, max: 3_600_000 },
      WHERE,
    ),
    maxKeys: checkWhole('maxKeys', options.maxKeys ?? 100_000, { min: 1 }, WHERE),
    local,
    logger,
    onOutage: options.onOutage,
  }
}

function defaultLogger(): Logger | false {
  const console = (globalThis as { console?: Partial<Logger> }).console
  return typeof console?.warn === 'function' ? (console as Logger) : false
}
