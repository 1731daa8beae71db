import { type Clock, systemClock } from '../clock.js'
import { RateLimitError } from '../errors.js'
import { compileIdentities } from '../identity/identities.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Limiter } from '../limiter/types.js'
import { FOREIGN_OPTIONS } from '../options/foreign-options.js'
import { createResponder } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import { type AdapterKit, requestEntry, type Shared } from './exchange.js'
import {
  checkAdapterOptions,
  type KitOptions,
  limiterOptionsOf,
  refundPredicate,
} from './options.js'
import { guardShadowDeniedHook } from './shadow-hook.js'
import type { LoadShedder, Shedder } from './shed.js'
import { releasesSlots } from './slots.js'
import type { Framework } from './types.js'

export type { WriteVerdictFields } from '../headers/families.js'
export { type AdapterKit, Exchange, isPromise } from './exchange.js'
export type { KitOptions } from './options.js'
export type { FieldSink, Framework } from './types.js'

const SILENT = { warn() {} }

/**
 * Builds a middleware's kit from the rules (or a limiter of the app's own), the options and the
 * framework's descriptor: the limiter, the identities it reads and the responder, with every rule
 * and option checked here, at start-up.
 * @example
 * const kit = createAdapterKit(rules, options, {
 *   method: (req) => req.method, path: (req) => req.url,
 *   socketAddress: (req) => req.socket.remoteAddress, header: (req, name) => req.headers[name],
 *   user: () => undefined,
 * })
 */
export function createAdapterKit<Req, Res>(
  rules: readonly RuleConfig[] | Limiter,
  options: KitOptions<Req, Res>,
  framework: Framework<Req>,
): AdapterKit<Req, Res> {
  checkAdapterOptions(options, framework.hooks ?? [], FOREIGN_OPTIONS)
  const own = isLimiter(rules)
  const logger = options.logger === false ? SILENT : options.logger
  const limiter = own ? rules : createLimiter({ ...limiterOptionsOf(options), rules, logger })
  const responder = createResponder(options)
  // A limiter of the app's own may read any identity; one built here reads only its rules'.
  const keysOn = (identity: string) =>
    own || limiter.rules.some((rule) => rule.match.identity.includes(identity))
  const identities = compileIdentities(options, framework.header, {
    apiKey: keysOn('api_key'),
    headersCut: framework.headersCut,
  })
  const refundIf = refundPredicate(options.refund)
  const shedder = bindShedder(options.shed, options.clock ?? systemClock, framework.eventLoopDelay)
  const shared: Shared<Req> = {
    limiter,
    responder,
    onShadowDenied: guardShadowDeniedHook(options),
    ownAnswer: options.onLimited !== undefined,
    refundIf,
    disconnected: framework.disconnected,
    releases: releasesSlots(limiter),
    inFlight: shedder?.countsInFlight ? shedder : undefined,
    debugHeader: options.debugHeader,
  }
  const names = responder.headerNames
  return {
    watchesEnd: refundIf !== undefined || shared.releases || shared.inFlight !== undefined,
    releasesSlots: shared.releases,
    fieldNames: options.exposeHeaders ? [...names, 'Access-Control-Expose-Headers'] : names,
    enter: requestEntry(shared, framework, options, identities, shedder, keysOn('user')),
  }
}

/** The middleware's shedder, from what `loadShedder` returned (the only check on this path). */
function bindShedder<Req>(
  shed: LoadShedder<Req> | undefined,
  clock: Clock,
  runtimeDelay: (() => () => number) | undefined,
): Shedder<Req> | undefined {
  if (shed === undefined) return undefined
  if (typeof shed?.bind !== 'function') {
    throw new RateLimitError('ERR_RL_INVALID_RULE', 'shed: expected loadShedder({ ... })', {
      field: 'shed',
    })
  }
  return shed.bind(clock, runtimeDelay)
}

function isLimiter(value: readonly RuleConfig[] | Limiter): value is Limiter {
  return !Array.isArray(value) && typeof (value as Limiter).decide === 'function'
}
