import type { AlgorithmTable } from '../algorithms/table.js'
import type { RateLimitError } from '../errors.js'
import { CURRENT_HEADERS, type HeaderFamily, type StandardHeaders } from '../headers/families.js'
import { API_KEY_OPTIONS, type apiKeyIdentity } from '../identity/identities.js'
import type { ProxyTrust } from '../identity/proxy-trust.js'
import type { clientFigures } from '../limiter/client-figures.js'
import type { LimiterParts } from '../limiter/create-limiter.js'
import { type clockReader, systemTime } from '../limiter/decide.js'
import type { FallbackPart } from '../limiter/fallback.js'
import { NO_ROUTES } from '../limiter/no-routes.js'
import type { PenaltyPart } from '../limiter/penalised.js'
import type { RouteMatching } from '../limiter/route-matching.js'
import type { ReservationPart } from '../limiter/settle.js'
import type { rulesUpdater } from '../limiter/update.js'
import { invalidOption, type OptionKind } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import type { partitionKeys } from '../response/partition-keys.js'
import type { ResponderParts } from '../response/responder.js'
import type { shadowDeniedHook } from '../shadow-hook.js'
import type { Store } from '../store/types.js'
import type { WebResponseEnd } from '../web-response-end.js'

/**
 * What a middleware made by `createRateLimit` may use, named by the app: the algorithms its
 * rules may name, and the parts that only some apps need. What is not given is not bundled; a
 * rule or option that needs it is refused at start-up, naming the part to add. `rateLimit`
 * has every part.
 * @example
 * const rateLimit = createRateLimit({ algorithms: { token_bucket: tokenBucket } })
 */
export type RateLimitParts = {
  /** The algorithms rules may name, by the name a rule gives: `{ token_bucket: tokenBucket }`. */
  readonly algorithms: AlgorithmTable
  /**
   * `routeMatching`, for rules that name routes (`match.route`, `costByRoute`).
   * @default none: a rule naming a route is refused
   */
  readonly routes?: RouteMatching | undefined
  /**
   * `trustedProxies`, for a `trustProxy` that trusts a proxy: the forwarding headers' parsers.
   * @default none: such a `trustProxy` is refused
   */
  readonly proxies?: ProxyTrust | undefined
  /**
   * The store a middleware makes when its options give none: `memoryStore` (bounded in bytes,
   * for millions of keys) or `mapStore` (a tenth of the bundle, for the few keys a Worker's
   * isolate holds); the factory, called with no options.
   * @default none: each middleware's options must give a `store`
   */
  readonly store?: (() => Store) | undefined
  /**
   * `partitionKeys`, for the `partitionKey` option (the `pk` of the current-draft fields, hashed
   * with SHA-256).
   * @default none: `partitionKey` is refused
   */
  readonly partitionKeys?: typeof partitionKeys | undefined
  /**
   * The families of rate-limit fields besides the current draft's (`RateLimit`,
   * `RateLimit-Policy`), which every middleware has: `xRateLimitHeaders` (`X-RateLimit-*`, sent
   * with `legacyHeaders: true`), `draft6Headers`, `draft7Headers`, `draft12Headers`.
   * @default none: `legacyHeaders: true` or a `standardHeaders` of draft-6, draft-7 or draft-12
   * is refused
   */
  readonly headers?: readonly HeaderFamily[] | undefined
  /**
   * `penalties`, for rules with a `penalty` (blocks that grow with repeated offences).
   * @default none: a rule with a penalty is refused
   */
  readonly penalties?: PenaltyPart | undefined
  /**
   * `reservations`, for rules with `settle` (an estimate charged first, the actual cost settled
   * after the response: the `settle` and `estimate` options).
   * @default none: a rule with `settle` is refused
   */
  readonly reservations?: ReservationPart | undefined
  /**
   * `rulesUpdater`, for changing the rules while running (`middleware.update(rules)`).
   * @default none: `update` is refused, naming this part
   */
  readonly update?: typeof rulesUpdater | undefined
  /**
   * `clientFigures`, for the `figures` option (a rule's figures looked up per client).
   * @default none: `figures` is refused, naming this part
   */
  readonly figures?: typeof clientFigures | undefined
  /**
   * `localFallback`, for rules with `onStoreError: 'fallback'` (decided in this process while a
   * `fallbackStore`'s shared store fails).
   * @default none: a rule with `onStoreError: 'fallback'` is refused
   */
  readonly localFallback?: FallbackPart | undefined
  /**
   * `shadowDeniedHook`, for the `onShadowDenied` option (the app's hook, kept from failing a
   * request).
   * @default none: `onShadowDenied` is refused, naming this part
   */
  readonly shadowHook?: typeof shadowDeniedHook | undefined
  /**
   * `apiKeyIdentity`, for the `api_key` identity (rules and lists keyed on it, read from
   * `apiKeyHeader` or a bearer token) and its options. A limiter of the app's own reads it only
   * with this part.
   * @default none: a rule or list keyed on `api_key`, or an API-key option, is refused
   */
  readonly apiKeys?: typeof apiKeyIdentity | undefined
  /**
   * `clockReader`, for the `clock` option (a clock of the app's own, each reading checked: one
   * that throws or gives no time is decided as a store failure, `ERR_RL_CLOCK_FAILED`).
   * @default none: `Date.now()` is read directly, and `clock` is refused, naming this part
   */
  readonly clock?: typeof clockReader | undefined
  /**
   * `missingIdentityStatus`, for the `missingIdentity` option (a 401 or 403 rather than the 400
   * for a request without the identity a `'deny'` rule keys on).
   * @default none: `missingIdentity` is refused, naming this part
   */
  readonly missingIdentity?: OptionKind | undefined
}

/**
 * The parts a kit is built from: the limiter's, how forwarding headers are read, and how
 * partition keys are hashed.
 */
export type KitParts = LimiterParts &
  ResponderParts & {
    readonly proxies: ProxyTrust
    readonly shadowHook: typeof shadowDeniedHook
    readonly apiKeys: typeof apiKeyIdentity
    /** The `missingIdentity` option's check: `missingIdentityStatus`, or its refusal. */
    readonly missingIdentity: OptionKind
    /**
     * How a fetch runtime's adapter follows a response holding slots to its end: the full kit's
     * own, a composed one's carried by the `concurrency` it was given; refuses (`notComposed`)
     * when asked without it.
     */
    readonly responseEnd: () => WebResponseEnd
  }

/**
 * Each part that may be given besides the algorithms: what it expects, the method it has (a part
 * without one is a function; `headers`, a list of families that each have it), and, for a part
 * left out that something asks, the option it refuses (`notComposed`, adding `name: expected`).
 */
const PARTS: Readonly<
  Record<string, readonly [expected: string, method?: string, refuses?: string]>
> = {
  routes: ['routeMatching', 'targets'],
  proxies: ['trustedProxies', undefined, 'trustProxy'],
  store: ['memoryStore or mapStore', undefined, 'store'],
  partitionKeys: ['partitionKeys', undefined, 'partitionKey'],
  headers: ['a list such as [draft7Headers]', 'write'],
  penalties: ['penalties', 'verdict'],
  reservations: ['reservations', 'createSettle'],
  update: ['rulesUpdater'],
  figures: ['clientFigures', undefined, 'figures'],
  localFallback: ['localFallback', 'decide'],
  shadowHook: ['shadowDeniedHook', undefined, 'onShadowDenied'],
  apiKeys: ['apiKeyIdentity'],
  clock: ['clockReader'],
  missingIdentity: ['missingIdentityStatus', undefined, 'missingIdentity'],
}

const API_KEYS_LEFT_OUT = "needs apiKeys: apiKeyIdentity in createRateLimit's parts"

/** An app's parts, checked, with the refusals standing in for those it left out. */
export function kitParts(parts: RateLimitParts): KitParts {
  if (typeof parts !== 'object' || parts === null) {
    throw invalidOption('parts', 'expected { algorithms: { token_bucket: tokenBucket }, ... }')
  }
  refuseUnknownOptions(parts, ['algorithms', ...Object.keys(PARTS)], 'createRateLimit()')
  // The refusals standing in for the parts left out that must answer.
  const standIns: Record<string, unknown> = {}
  for (const [name, [expected, method, refuses]] of Object.entries(PARTS)) {
    const part: unknown = parts[name as keyof RateLimitParts]
    // A part is a function, or has the method; `headers`, a list of families that each have it.
    const items = name !== 'headers' ? [part] : Array.isArray(part) ? part : [undefined]
    const ok = items.every(
      (item) =>
        typeof (method === undefined
          ? item
          : (item as Record<string, unknown> | null)?.[method]) === 'function',
    )
    if (part !== undefined && !ok) throw invalidOption(name, `expected ${expected}`)
    if (part === undefined && refuses !== undefined) {
      standIns[name] = standIn(refuses, `${name}: ${expected}`)
    }
  }
  const responseEnd = (
    parts.algorithms?.concurrency as { responseEnd?: WebResponseEnd } | undefined
  )?.responseEnd
  // The parts given as they are (one left out reads as undefined), and the stand-ins.
  return {
    ...(parts as Required<RateLimitParts>),
    ...standIns,
    families: givenFamilies([...(parts.headers ?? []), CURRENT_HEADERS]),
    routes: parts.routes ?? NO_ROUTES,
    clock: parts.clock ?? systemTime,
    // Left out: the limiter refuses a rule keyed on `api_key`, the stand-in a list keyed on it
    // (`keysOn`) or an option for it. A limiter of the app's own (`keysOn` undefined) reads none.
    apiKeysLeftOut: parts.apiKeys ? undefined : API_KEYS_LEFT_OUT,
    apiKeys:
      parts.apiKeys ??
      ((options, _read, keysOn) => {
        for (const name of API_KEY_OPTIONS) {
          if (options[name] !== undefined) throw invalidOption(name, API_KEYS_LEFT_OUT)
        }
        if (keysOn) throw invalidOption('lists', API_KEYS_LEFT_OUT)
        return undefined
      }),
    // Carried by the `concurrency` given, which concurrency rules of a limiter of the app's own
    // need as well.
    responseEnd: responseEnd
      ? () => responseEnd
      : standIn('concurrency', 'concurrency', 'algorithms'),
  }
}

/**
 * The families header options turn on, of `all` (those given and the current draft's), in the
 * order their fields go out (`X-RateLimit-*` first); an option asking for one left out is
 * refused, naming the part to add.
 */
function givenFamilies(all: readonly HeaderFamily[]) {
  return (
    legacyHeaders: boolean | null | undefined,
    standardHeaders: StandardHeaders | false,
  ): HeaderFamily[] => {
    const families: HeaderFamily[] = []
    if (legacyHeaders) {
      const legacy = all.find((family) => family.standardHeaders.length === 0)
      if (legacy === undefined) throw notComposed('legacyHeaders', 'xRateLimitHeaders', 'headers')
      families.push(legacy)
    }
    if (standardHeaders !== false) {
      const standard = all.find((family) => family.standardHeaders.includes(standardHeaders))
      if (standard === undefined) {
        throw notComposed('standardHeaders', `draft${standardHeaders.slice(6)}Headers`, 'headers')
      }
      families.push(standard)
    }
    return families
  }
}

/**
 * The refusal of an option (`field`) that needs a part the middleware was composed without:
 * names the part to add (`add`) to createRateLimit's `list` (its parts, its headers or its
 * algorithms).
 */
export function notComposed(field: string, add: string, list = 'parts'): RateLimitError {
  return invalidOption(field, `needs ${add} in createRateLimit's ${list}`)
}

/** The stand-in for a part left out: refuses (`notComposed`) whatever asks it. */
function standIn(field: string, add: string, list?: string): () => never {
  return () => {
    throw notComposed(field, add, list)
  }
}
