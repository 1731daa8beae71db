import type { AlgorithmTable } from '../algorithms/table.js'
import { CURRENT_HEADERS, type FamilyOptions, type HeaderFamily } from '../headers/families.js'
import type { PartitionKeyHasher } from '../headers/partition-key.js'
import { NO_PROXIES } from '../identity/no-proxies.js'
import type { ProxyTrust } from '../identity/proxy-trust.js'
import type { clientFigures } from '../limiter/client-figures.js'
import type { LimiterParts } from '../limiter/create-limiter.js'
import { NO_ROUTES } from '../limiter/no-routes.js'
import type { PenaltyPart } from '../limiter/penalised.js'
import type { RouteMatching } from '../limiter/route-matching.js'
import type { ReservationPart } from '../limiter/settle.js'
import type { rulesUpdater } from '../limiter/update.js'
import { invalidOption } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import type { ResponderParts } from '../response/responder.js'
import type { Store } from '../store/types.js'

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
   * `createPartitionKeyHasher`, for the `partitionKey` option (the `pk` of the current-draft
   * fields, hashed with SHA-256).
   * @default none: `partitionKey` is refused
   */
  readonly partitionKeys?: (() => PartitionKeyHasher) | undefined
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
}

/**
 * The parts a kit is built from: the limiter's, how forwarding headers are read, and how
 * partition keys are hashed.
 */
export type KitParts = LimiterParts &
  ResponderParts & {
    readonly proxies: ProxyTrust
  }

/**
 * Each part that may be given besides the algorithms, with the test its value must pass and what
 * it expects (a function unless said otherwise).
 */
const PARTS: Readonly<
  Record<string, readonly [expected: string, test?: (part: never) => boolean]>
> = {
  routes: ['routeMatching', (routes: RouteMatching) => typeof routes?.targets === 'function'],
  proxies: ['trustedProxies'],
  store: ['a store factory: memoryStore or mapStore'],
  partitionKeys: ['createPartitionKeyHasher'],
  headers: [
    'a list such as [xRateLimitHeaders, draft7Headers]',
    (headers: readonly HeaderFamily[]) =>
      Array.isArray(headers) && headers.every((family) => typeof family?.write === 'function'),
  ],
  penalties: ['penalties', (penalties: PenaltyPart) => typeof penalties?.decisions === 'function'],
  reservations: [
    'reservations',
    (reservations: ReservationPart) => typeof reservations?.createSettle === 'function',
  ],
  update: ['rulesUpdater'],
  figures: ['clientFigures'],
}

const isFunction = (part: unknown) => typeof part === 'function'

/** An app's parts, checked, with the refusals standing in for those it left out. */
export function kitParts(parts: RateLimitParts): KitParts {
  if (typeof parts !== 'object' || parts === null) {
    throw invalidOption('parts', 'expected { algorithms: { token_bucket: tokenBucket }, ... }')
  }
  refuseUnknownOptions(parts, ['algorithms', ...Object.keys(PARTS)], 'createRateLimit()')
  for (const [name, [expected, test = isFunction]] of Object.entries(PARTS)) {
    const part = parts[name as keyof RateLimitParts]
    if (part !== undefined && !test(part as never))
      throw invalidOption(name, `expected ${expected}`)
  }
  const { routes, proxies, store, partitionKeys, headers = [], penalties, reservations } = parts
  return {
    families: givenFamilies(headers),
    store: store ?? noStore,
    partitionKeys: partitionKeys ?? noPartitionKeys,
    algorithms: parts.algorithms,
    routes: routes ?? NO_ROUTES,
    proxies: proxies ?? NO_PROXIES,
    foreignOptions: undefined,
    penalties,
    reservations,
    update: parts.update,
    figures: parts.figures ?? noFigures,
  }
}

// The refusals standing in for the parts an app leaves out, here so that only composed
// middlewares bundle them.

/**
 * The families header options turn on, of the current draft's and those given, in the order
 * their fields go out (`X-RateLimit-*` first); an option asking for one left out is refused,
 * naming the part to add.
 */
function givenFamilies(given: readonly HeaderFamily[]) {
  return ({ legacyHeaders, standardHeaders }: FamilyOptions): HeaderFamily[] => {
    const families: HeaderFamily[] = []
    const add = (field: string, value: unknown, family: HeaderFamily | undefined, part: string) => {
      if (family === undefined) {
        throw invalidOption(
          field,
          `${JSON.stringify(value)} sends fields this middleware was not composed with: add ${part} to createRateLimit's headers`,
        )
      }
      families.push(family)
    }
    const all: readonly HeaderFamily[] = [...given, CURRENT_HEADERS]
    if (legacyHeaders) {
      const legacy = all.find((family) => family.standardHeaders.length === 0)
      add('legacyHeaders', true, legacy, 'xRateLimitHeaders')
    }
    if (standardHeaders !== false) {
      const standard = all.find((family) => family.standardHeaders.includes(standardHeaders))
      add('standardHeaders', standardHeaders, standard, `draft${standardHeaders.slice(6)}Headers`)
    }
    return families
  }
}

function noStore(): never {
  throw invalidOption(
    'store',
    "required: this middleware was composed without a store of its own; give one here, or store: memoryStore (or mapStore) in createRateLimit's parts",
  )
}

function noFigures(): never {
  throw invalidOption('figures', "add figures: clientFigures to createRateLimit's parts")
}

function noPartitionKeys(): never {
  throw invalidOption(
    'partitionKey',
    "hashing partition keys needs SHA-256, which this middleware was not composed with: add partitionKeys: createPartitionKeyHasher to createRateLimit's parts",
  )
}
