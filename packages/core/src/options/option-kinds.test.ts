// Option values are checked by one loop over each factory's table of kinds (`checkOptionValues`).
// This compares it with the checks it replaced, copied here as they were (each factory checking
// its options one call at a time as it read them), over generated option objects: the error
// thrown (code, field, message) must be the same, or none from both.
import { describe, expect, it } from 'vitest'
import { createAdapterKit } from '../adapter/kit.js'
import { isRateLimitError, RateLimitError } from '../errors.js'
import { familiesFor, STANDARD_HEADERS } from '../headers/families.js'
import { createClientIpResolver } from '../identity/client-ip.js'
import { createIdentityResolver } from '../identity/identities.js'
import { createLimiter } from '../limiter/create-limiter.js'
import { createResponder } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { memoryStore } from '../store/memory-store.js'
import { FOREIGN_OPTIONS } from './foreign-options.js'
import { refuseUnknownOptions } from './unknown-options.js'

// ---- The old checks, as they were -------------------------------------------------------------

function invalidOption(field: string, problem: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_OPTION', `${field}: ${problem}`, { field })
}

function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'number') return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return 'an object JSON cannot show'
  }
}

function checkOneOf<T>(field: string, value: T, allowed: readonly T[]): T {
  if (allowed.includes(value)) return value
  throw invalidOption(
    field,
    `expected one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}, got ${shown(value)}`,
  )
}

function checkBoolean(field: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value
  throw invalidOption(field, `expected true or false, got ${shown(value)}`)
}

function checkWhole(
  field: string,
  value: unknown,
  range: { min: number; max?: number; unit?: string },
): number {
  const { min, max, unit } = range
  if (Number.isSafeInteger(value) && (value as number) >= min) {
    if (max === undefined || (value as number) <= max) return value as number
  }
  const what = unit === undefined ? 'a whole number' : `a whole number of ${unit}`
  const bounds = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`
  throw invalidOption(field, `expected ${what} ${bounds}, got ${shown(value)}`)
}

function checkFunction(field: string, value: unknown): void {
  if (typeof value === 'function') return
  // Shown as every other value now (it named the type given).
  throw invalidOption(field, `expected a function, got ${shown(value)}`)
}

function checkMethods(field: string, value: unknown, methods: string[], shape: string): void {
  const object = value as Record<string, unknown>
  if (Object(object) !== object) {
    throw invalidOption(field, `expected ${shape}, got ${shown(value)}`)
  }
  const missing = methods.filter((name) => typeof object[name] !== 'function')
  if (missing.length === 0) return
  throw invalidOption(field, `expected ${shape}, got one without ${missing.join(' or ')}`)
}

// Any names, those read here declared.
type Options = Record<string, unknown> & { [K in OptionName]?: unknown }
type OptionName =
  | 'store'
  | 'algorithms'
  | 'clock'
  | 'timers'
  | 'logger'
  | 'storeErrorRetryAfterMs'
  | 'storeTimeoutMs'
  | 'lists'
  | 'legacyHeaders'
  | 'legacyReset'
  | 'standardHeaders'
  | 'shadowPolicies'
  | 'exposeHeaders'
  | 'missingIdentity'
  | 'partitionKey'
  | 'ipv4Prefix'
  | 'ipv6Prefix'
  | 'apiKeyHeader'
  | 'maxApiKeyLength'
  | 'refund'
  | 'shed'
  | 'estimate'
  | 'settle'
  | 'wwwAuthenticate'
  | 'status'

/** createLimiter's checks (its rules valid), in their order. */
function oldLimiter(options: Options): void {
  const algorithms = options.algorithms ?? {}
  if (typeof algorithms !== 'object' || algorithms === null) {
    throw invalidOption(
      'algorithms',
      `expected an object such as { token_bucket: tokenBucket }, got ${shown(algorithms)}`,
    )
  }
  const store = options.store ?? memoryStore()
  checkMethods('store', store, ['consume', 'refund'], 'a Store')
  const clock = options.clock
  if (clock !== undefined) checkMethods('clock', clock, ['now'], '{ now(): number }')
  const timers = options.timers
  if (timers !== undefined) {
    const shape = '{ setTimeout, clearTimeout }'
    checkMethods('timers', timers, ['setTimeout', 'clearTimeout'], shape)
  }
  const retry = options.storeErrorRetryAfterMs
  if (retry !== undefined) checkWhole('storeErrorRetryAfterMs', retry, { min: 1, unit: 'ms' })
  const timeout = options.storeTimeoutMs
  const validTimeout =
    timeout === undefined ||
    timeout === false ||
    (Number.isSafeInteger(timeout) && (timeout as number) >= 1 && (timeout as number) < 2 ** 31)
  if (!validTimeout) {
    throw invalidOption(
      'storeTimeoutMs',
      `expected a whole number of ms from 1 to 2147483647, got ${shown(timeout)}`,
    )
  }
  const logger = options.logger
  if (logger !== undefined && logger !== false) {
    checkMethods('logger', logger, ['warn'], '{ warn(message) }')
  }
  const lists = options.lists
  if (lists !== undefined) checkMethods('lists', lists, ['compile'], 'accessLists()')
}

/** createResponder's checks, in their order. */
function oldResponder(options: Options): void {
  const flag = (name: string) => checkBoolean(name, options[name] ?? false)
  const legacyHeaders = flag('legacyHeaders')
  checkOneOf('legacyReset', options.legacyReset ?? 'epoch-seconds', [
    'epoch-seconds',
    'delta-seconds',
  ])
  const standardHeaders = checkOneOf(
    'standardHeaders',
    (options.standardHeaders ?? 'draft-11') as never,
    STANDARD_HEADERS,
  )
  const families = familiesFor(legacyHeaders, standardHeaders)
  flag('shadowPolicies')
  flag('exposeHeaders')
  const value = (options.missingIdentity ?? { status: 400 }) as Options
  const { status } = value
  const challenge = value.wwwAuthenticate
  const fieldValue =
    typeof challenge === 'string' &&
    /^[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/.test(challenge)
  if (!(status === 400 || status === 403 || (status === 401 && fieldValue))) {
    throw invalidOption(
      'missingIdentity',
      `expected { status: 400 }, { status: 403 } or { status: 401, wwwAuthenticate: "<scheme>" }, got ${shown(value)}`,
    )
  }
  const option = options.partitionKey
  if (option == null || option === false) return
  if (option !== true && typeof option !== 'function') {
    throw invalidOption('partitionKey', `expected true, false or a function, got ${shown(option)}`)
  }
  // The families that send `pk` (once flagged `partitionKeys`) are those without a group.
  if (!families.some((family) => family.group === undefined)) {
    throw invalidOption(
      'partitionKey',
      "no field sends it: standardHeaders 'draft-8' or later does",
    )
  }
}

/** createClientIpResolver's checks. */
function oldClientIp(options: Options): void {
  for (const [field, max] of [
    ['ipv4Prefix', 32],
    ['ipv6Prefix', 128],
  ] as const) {
    if (options[field] !== undefined) checkWhole(field, options[field], { min: 0, max })
  }
}

/** createIdentityResolver's checks, in their order. */
function oldIdentity(options: Options): void {
  oldClientIp(options)
  const apiKeyHeader = options.apiKeyHeader === undefined ? 'x-api-key' : options.apiKeyHeader
  if (apiKeyHeader !== false && !/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(apiKeyHeader as string)) {
    throw invalidOption('apiKeyHeader', `${shown(apiKeyHeader)} is not a header name`)
  }
  // As it was read: a value that is no text but passed the pattern (null, true) failed here.
  if (apiKeyHeader !== false) (apiKeyHeader as string).toLowerCase()
  checkWhole('maxApiKeyLength', options.maxApiKeyLength ?? 256, { min: 1 })
}

// createLimiter's options, in their order.
const OLD_LIMITER_OPTIONS = [
  'rules',
  'store',
  'algorithms',
  'clock',
  'timers',
  'logger',
  'onError',
  'storeErrorRetryAfterMs',
  'storeTimeoutMs',
  'customIdentities',
  'lists',
  'figures',
]

// The adapter's own options, in their order, 1 for the hooks that had to be functions.
const OLD_OWN: Record<string, 0 | 1> = {
  trustProxy: 0,
  proxyHeader: 0,
  ipv4Prefix: 0,
  ipv6Prefix: 0,
  ignoreWarnings: 0,
  apiKeyHeader: 0,
  bearerAsApiKey: 0,
  maxApiKeyLength: 0,
  legacyHeaders: 0,
  legacyReset: 0,
  standardHeaders: 0,
  shadowPolicies: 0,
  partitionKey: 0,
  exposeHeaders: 0,
  missingIdentity: 0,
  skip: 1,
  user: 1,
  plan: 1,
  identities: 1,
  refund: 0,
  onShadowDenied: 1,
  shed: 0,
  debugHeader: 1,
  estimate: 1,
  settle: 0,
  onLimited: 1,
}
const ADAPTER_HOOKS = ['getConnInfo']

/** createAdapterKit's checks (its rules valid, none with settle), in their order. */
function oldKit(options: Options): void {
  const adapterOwn = [...Object.keys(OLD_OWN), ...ADAPTER_HOOKS]
  const known = [...OLD_LIMITER_OPTIONS.filter((name) => name !== 'rules'), ...adapterOwn]
  refuseUnknownOptions(options, known, 'rateLimit()', FOREIGN_OPTIONS)
  for (const name of adapterOwn) {
    if (options[name] !== undefined && OLD_OWN[name] !== 0) checkFunction(name, options[name])
  }
  oldLimiter(options)
  oldResponder(options)
  oldIdentity(options)
  const refund = options.refund
  if (
    refund !== undefined &&
    refund !== 'failed' &&
    refund !== 'succeeded' &&
    typeof refund !== 'function'
  ) {
    throw invalidOption(
      'refund',
      `expected 'failed', 'succeeded' or a function, got ${shown(refund)}`,
    )
  }
  const shed = options.shed as { bind?: unknown } | null | undefined
  if (shed !== undefined && typeof shed?.bind !== 'function') {
    throw invalidOption('shed', 'expected loadShedder({ ... })')
  }
  if (options.estimate !== undefined) {
    throw invalidOption('estimate', 'no rule has a settle field')
  }
  const settle = options.settle as { bind?: unknown } | null | undefined
  if (
    settle !== undefined &&
    (typeof settle === 'function' || typeof settle?.bind !== 'function')
  ) {
    throw invalidOption('settle', 'expected settleFrom(...)')
  }
}

// ---- Generated options --------------------------------------------------------------------------

const fn = () => undefined
const noWarn = { warn: fn }

// Each option's values: those every check accepts, and those some check refuses (or that make
// the kit refuse: an `estimate` with no rule that settles, a `partitionKey` no draft sends).
const VALUES: Record<
  string,
  { readonly ok: readonly unknown[]; readonly bad: readonly unknown[] }
> = {
  store: { ok: [null, memoryStore(), mapStore()], bad: [5, 'redis', {}, { consume: fn }, fn] },
  algorithms: { ok: [null], bad: [5, 'token_bucket', true] },
  clock: { ok: [{ now: () => 0 }], bad: [null, 0, {}, { now: 1 }, []] },
  timers: {
    ok: [{ setTimeout: fn, clearTimeout: fn }],
    bad: [null, 'x', { setTimeout: fn }, {}],
  },
  logger: { ok: [false, noWarn], bad: [null, true, {}, 'console'] },
  storeErrorRetryAfterMs: { ok: [1, 5000], bad: [null, 0, -1, 1.5, '100', Number.NaN, 10n] },
  storeTimeoutMs: { ok: [false, 1, 2 ** 31 - 1], bad: [null, true, 0, 2 ** 31, 1.5, '5'] },
  lists: { ok: [{ compile: () => undefined }], bad: [null, {}, { compile: 1 }, [1]] },
  legacyHeaders: { ok: [null, true, false], bad: ['false', 1, {}] },
  legacyReset: { ok: [null, 'epoch-seconds', 'delta-seconds'], bad: ['epoch', 1, true] },
  standardHeaders: {
    ok: [null, false, 'draft-6', 'draft-7', 'draft-8', 'draft-11', 'draft-12'],
    bad: ['draft-5', true, 11, 'DRAFT-11'],
  },
  shadowPolicies: { ok: [null, true, false], bad: ['yes', 0] },
  exposeHeaders: { ok: [null, true, false], bad: ['true', []] },
  missingIdentity: {
    ok: [null, { status: 400 }, { status: 403 }, { status: 401, wwwAuthenticate: 'Bearer' }],
    bad: [
      400,
      'x',
      {},
      { status: 404 },
      { status: 401 },
      { status: 401, wwwAuthenticate: '' },
      { status: 401, wwwAuthenticate: 'Bearer\nx' },
      { status: 401, wwwAuthenticate: ' Bearer' },
    ],
  },
  partitionKey: { ok: [null, false], bad: [true, fn, 'key', 1, {}] },
  ipv4Prefix: { ok: [0, 24, 32], bad: [null, 33, -1, 1.5, '24'] },
  ipv6Prefix: { ok: [0, 48, 64], bad: [null, 129, -1, '64', Number.POSITIVE_INFINITY] },
  apiKeyHeader: {
    ok: [false, 'x-api-key', 'Api-Key'],
    bad: ['x api key', '', 'é', true, null, 42, {}],
  },
  maxApiKeyLength: { ok: [null, 1, 512], bad: [0, 1.5, '256', false] },
  skip: { ok: [fn], bad: [null, true, 'skip', [], {}] },
  user: { ok: [fn], bad: [null, 'user', 1] },
  plan: { ok: [fn], bad: ['free', {}] },
  identities: { ok: [fn], bad: [{}, []] },
  onShadowDenied: { ok: [fn], bad: [true] },
  debugHeader: { ok: [fn], bad: ['x-debug'] },
  onLimited: { ok: [fn], bad: [false, null] },
  getConnInfo: { ok: [fn], bad: [{}, null] },
  refund: { ok: ['failed', 'succeeded', fn], bad: [null, true, 'always', 400] },
  shed: { ok: [{ bind: fn }], bad: [null, {}, fn, 'on'] },
  estimate: { ok: [], bad: [fn, 5, null] },
  settle: { ok: [{ bind: fn }], bad: [null, {}, fn, 'usage'] },
}
const UNKNOWN = ['windowMs', 'trustproxy', 'max', 'foo', 'standardheaders']

// A seeded generator (mulberry32), so that a failure can be replayed.
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Option objects of `names`: each option left out or given one of its accepted values, with
 * `bad` of them (chosen at random) given a refused value, and sometimes an unknown name.
 */
function* generated(names: readonly string[], bad: number, unknown: boolean, count: number) {
  const next = random(0x5eed + bad * 7 + names.length)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!
  for (let i = 0; i < count; i++) {
    const options: Options = {}
    for (const name of names) {
      const { ok } = VALUES[name]!
      if (ok.length > 0 && next() < 0.5) options[name] = pick(ok)
    }
    const refused = [...names].filter((name) => VALUES[name]!.bad.length > 0)
    for (let b = 0; b < bad; b++) {
      const name = pick(refused)
      options[name] = pick(VALUES[name]!.bad)
    }
    if (unknown && next() < 0.3) options[pick(UNKNOWN)] = 1
    yield options
  }
}

type Outcome = { code: string; field: string | undefined; message: string } | 'none' | 'crash'

function outcome(start: () => unknown): Outcome {
  try {
    start()
    return 'none'
  } catch (error) {
    if (error instanceof TypeError) return 'crash'
    if (!isRateLimitError(error)) throw error
    return { code: error.code, field: error.field, message: error.message }
  }
}

/**
 * The new check's outcome is the old one's; where the old one failed on a value it let through
 * (an `apiKeyHeader` that is no text), the new one refuses it.
 */
function expectSame(got: Outcome, expected: Outcome, options: Options): void {
  if (expected === 'crash') {
    expect(got).toEqual({
      code: 'ERR_RL_INVALID_OPTION',
      field: 'apiKeyHeader',
      message: `[tollgate] apiKeyHeader: ${shown(options.apiKeyHeader)} is not a header name`,
    })
  } else expect(got, JSON.stringify(Object.keys(options))).toEqual(expected)
}

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
]
const FRAMEWORK = {
  method: () => 'GET',
  path: () => '/',
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
  hooks: ADAPTER_HOOKS,
}

const LIMITER_NAMES = [
  'store',
  'algorithms',
  'clock',
  'timers',
  'logger',
  'storeErrorRetryAfterMs',
  'storeTimeoutMs',
  'lists',
]
const RESPONDER_NAMES = [
  'legacyHeaders',
  'legacyReset',
  'standardHeaders',
  'shadowPolicies',
  'exposeHeaders',
  'missingIdentity',
  'partitionKey',
]
const CLIENT_IP_NAMES = ['ipv4Prefix', 'ipv6Prefix']
const IDENTITY_NAMES = [...CLIENT_IP_NAMES, 'apiKeyHeader', 'maxApiKeyLength']
const KIT_NAMES = Object.keys(VALUES)

// Each factory: the new check (the factory itself) and the old one. The limiter's algorithms
// are the built-in ones when the options give none: the old copy reads them as `{}`.
const FACTORIES = {
  createLimiter: {
    names: LIMITER_NAMES,
    made: (options: Options) => createLimiter({ rules: RULES, logger: false, ...options } as never),
    old: (options: Options) => {
      refuseUnknownOptions(options, OLD_LIMITER_OPTIONS, 'createLimiter()', FOREIGN_OPTIONS)
      oldLimiter({ logger: false, ...options })
    },
  },
  createResponder: {
    names: RESPONDER_NAMES,
    made: (options: Options) => createResponder(options as never),
    old: oldResponder,
  },
  createIdentityResolver: {
    names: IDENTITY_NAMES,
    made: (options: Options) => createIdentityResolver({ logger: false, ...options } as never),
    old: oldIdentity,
  },
  createClientIpResolver: {
    names: CLIENT_IP_NAMES,
    made: (options: Options) => createClientIpResolver({ logger: false, ...options } as never),
    old: oldClientIp,
  },
  createAdapterKit: {
    names: KIT_NAMES,
    made: (options: Options) =>
      createAdapterKit(RULES, { logger: false, ...options } as never, FRAMEWORK),
    old: (options: Options) => oldKit({ logger: false, ...options }),
  },
} as const

describe('option values checked by their kinds, against the checks they replaced', () => {
  for (const [factory, { names, made, old }] of Object.entries(FACTORIES)) {
    const unknown = factory === 'createLimiter' || factory === 'createAdapterKit'

    it(`${factory}: the same refusal, or none, with at most one value refused`, () => {
      let refusals = 0
      for (const bad of [0, 1]) {
        for (const options of generated(names, bad, unknown, 1500)) {
          const expected = outcome(() => old(options))
          if (expected !== 'none') refusals++
          expectSame(
            outcome(() => made(options)),
            expected,
            options,
          )
        }
      }
      expect(refusals).toBeGreaterThan(500)
    })

    it(`${factory}: with several refused, one of their refusals`, () => {
      for (const options of generated(names, 3, false, 500)) {
        // What the old checks refuse of the options given, of each alone, and of the others.
        const each = [
          outcome(() => old(options)),
          ...Object.keys(options).flatMap((name) => [
            outcome(() => old({ [name]: options[name] })),
            outcome(() => old({ ...options, [name]: undefined })),
          ]),
        ].filter((o) => o !== 'none')
        const got = outcome(() => made(options))
        if (each.length === 0) expect(got).toBe('none')
        else if (!each.includes('crash')) expect(each).toContainEqual(got)
        else expect(got).toMatchObject({ code: 'ERR_RL_INVALID_OPTION' })
      }
    })
  }
})
