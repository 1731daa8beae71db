import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { systemClock } from '../clock.js'
import { familiesFor } from '../headers/families.js'
import { compileClientIp } from '../identity/client-ip.js'
import { apiKeyIdentity, compileIdentities } from '../identity/identities.js'
import { trustedProxies } from '../identity/proxy-trust.js'
import { clientFigures } from '../limiter/client-figures.js'
import { composeLimiter } from '../limiter/create-limiter.js'
import { clockReader } from '../limiter/decide.js'
import { localFallback } from '../limiter/fallback.js'
import { penalties } from '../limiter/penalised.js'
import { routeMatching } from '../limiter/route-matching.js'
import { reservations } from '../limiter/settle.js'
import type { Limiter } from '../limiter/types.js'
import { rulesUpdater } from '../limiter/update.js'
import { FOREIGN_OPTIONS } from '../options/foreign-options.js'
import { invalidOption } from '../options/option-values.js'
import { partitionKeys } from '../response/partition-keys.js'
import { composeResponder, missingIdentityStatus } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import { shadowDeniedHook } from '../shadow-hook.js'
import { memoryStore } from '../store/memory-store.js'
import { createWarnOnce } from '../warnings.js'
import { WEB_RESPONSE_END } from '../web-response-end.js'
import { firstEntry } from './creation-watch.js'
import { type AdapterKit, requestEntry, type Shared } from './exchange.js'
import { guardFramework } from './framework-shape.js'
import { checkAdapterOptions, type KitOptions, limiterOptionsOf } from './options.js'
import { type KitParts, kitParts, notComposed, type RateLimitParts } from './parts.js'
import { releasesSlots } from './slots.js'
import type { Framework } from './types.js'

export type { WriteVerdictFields } from '../headers/families.js'
export {
  type AdapterKit,
  Exchange,
  isPromise,
  type Updatable,
  withUpdate,
} from './exchange.js'
export type { KitOptions } from './options.js'
export type { RateLimitParts } from './parts.js'
export type { FieldSink, Framework } from './types.js'

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
  const kit = buildKit(rules, options, framework, {
    algorithms: BUILT_IN_ALGORITHMS,
    routes: routeMatching,
    proxies: trustedProxies,
    store: memoryStore,
    partitionKeys,
    families: familiesFor,
    foreignOptions: FOREIGN_OPTIONS,
    penalties,
    reservations,
    update: rulesUpdater,
    figures: clientFigures,
    shadowHook: shadowDeniedHook,
    apiKeys: apiKeyIdentity,
    responseEnd: () => WEB_RESPONSE_END,
    localFallback,
    clock: clockReader,
    missingIdentity: missingIdentityStatus,
  })
  // Only `rateLimit` looks at what its first request is handed: a middleware composed of parts
  // for a small bundle, mounted on the wrong framework, fails on its first request all the same,
  // with the TypeError of the first property it misses.
  guardFramework(kit, framework.name)
  return kit
}

/**
 * `createAdapterKit` composed of the parts the app names (an adapter's `createRateLimit`): its
 * bundle holds those and none of the others. The parts are checked here; a rule or option that
 * needs one left out is refused when the kit is made.
 * @example
 * const createKit = composeAdapterKit({ algorithms: { token_bucket: tokenBucket } })
 * const kit = createKit(rules, options, framework)
 */
export function composeAdapterKit(parts: RateLimitParts): typeof createAdapterKit {
  const checked = kitParts(parts)
  return (rules, options, framework) => buildKit(rules, options, framework, checked)
}

function buildKit<Req, Res>(
  rules: readonly RuleConfig[] | Limiter,
  options: KitOptions<Req, Res>,
  framework: Framework<Req>,
  parts: KitParts,
): AdapterKit<Req, Res> {
  // Every option checked here; the modules below only read them (the limiter checks its own).
  checkAdapterOptions(options, framework.hooks ?? [], parts)
  // A limiter of the app's own, rather than rules to build one of.
  const own = !Array.isArray(rules) && typeof (rules as Limiter).decide === 'function'
  const limiter = own
    ? (rules as Limiter)
    : composeLimiter({ ...limiterOptionsOf(options), rules: rules as readonly RuleConfig[] }, parts)
  const responder = composeResponder(options, parts)
  // A limiter of the app's own may read any identity; one built here reads only its lists' and
  // the rules it was made with (an update does not make it read more).
  const initial = limiter.rules
  const keysOn = (identity: string) =>
    own ||
    options.lists?.fields?.some((field) => field.endsWith(`.${identity}`)) ||
    initial.some((rule) => rule.match.identity.includes(identity))
  // A limiter of the app's own keyed on api_key in a middleware that reads no API key: refused,
  // rather than each of its requests missing the key.
  if (
    own &&
    parts.apiKeysLeftOut &&
    initial.some((rule) => rule.match.identity.includes('api_key'))
  )
    throw invalidOption(
      'rules',
      `the limiter's rules key on api_key, which ${parts.apiKeysLeftOut}`,
    )
  const identities = compileIdentities(
    framework.header,
    compileClientIp(options, parts.proxies),
    parts.apiKeys(options, framework.header, own ? undefined : keysOn('api_key')),
    framework.incoming,
  )
  // The `refund` option as a predicate (one for both words), or undefined for never.
  const refund = options.refund
  const refundIf =
    typeof refund === 'string'
      ? (status: number) => (refund === 'failed' ? status >= 400 : status < 400)
      : refund
  // The shedder, from what `loadShedder` returned.
  const shedder = options.shed?.bind(options.clock ?? systemClock, framework.eventLoopDelay)
  const givesSlotsBack = releasesSlots(limiter)
  // The `settle` option is bound to the limiter (the kit's `meter`); an `estimate` no rule would
  // reserve is refused.
  const { settle, estimate } = options
  if (estimate !== undefined && !initial.some((rule) => rule.settle !== undefined)) {
    throw invalidOption('estimate', 'no rule has a settle field')
  }
  // One object is both the kit the adapter holds and what every `Exchange` shares.
  const kit: Shared<Req> & {
    -readonly [K in keyof AdapterKit<Req, Res>]: AdapterKit<Req, Res>[K]
  } = {
    limiter,
    responder,
    // Guarded by the part a composed middleware is given for it (a stand-in refuses the option).
    onShadowDenied: options.onShadowDenied && parts.shadowHook(options),
    ownAnswer: options.onLimited !== undefined,
    refundIf,
    shedder,
    debugHeader: options.debugHeader,
    watchesEnd: refundIf !== undefined || givesSlotsBack || shedder?.over !== undefined,
    releasesSlots: givesSlotsBack,
    responseEnd: givesSlotsBack ? parts.responseEnd() : undefined,
    fieldNames: responder.headerNames,
    enter: undefined as never,
    meter: settle?.bind(limiter, createWarnOnce(options)),
    // The limiter's `update`, told what the kit was made to serve (the identities it reads,
    // whether it gives slots back), so that a rule it cannot serve is refused as the limiter
    // refuses one.
    update: (rules: readonly RuleConfig[]) => {
      if (limiter.update === undefined) throw notComposed('update', 'update: rulesUpdater')
      return limiter.update(rules, own ? {} : { reads: keysOn, releasesSlots: givesSlotsBack })
    },
  }
  kit.enter = requestEntry(kit, framework, options, identities, keysOn('user'))
  // A limiter of the app's own, or a store it gives, keeps state across kits: one made per
  // request still limits, so only kits on a memory store of their own are watched.
  if (!own && options.store === undefined) kit.enter = firstEntry(kit, options)
  return kit
}
