/**
 * express-rate-limit's coded checks: each warns once per limiter through the logger (an error
 * for `ERR_ERL_*`, a warning for `WRN_ERL_*`), never throws, and can be switched off by name
 * with `validate: { name: false }` (or all with `validate: false`).
 */
import { isIP } from 'node:net'
import type { Request } from 'express'
import type { EnabledValidations, Logger, Options, Store } from './types.js'

/** A misconfiguration: `code` names it, `help` is the page that explains it. */
class ValidationError extends Error {
  readonly code: string
  readonly help: string
  constructor(code: string, message: string) {
    const help = `https://express-rate-limit.github.io/${code}/`
    super(`${message} See ${help} for more information.`)
    this.name = new.target.name
    this.code = code
    this.help = help
  }
}

/** A configuration whose meaning changed between major versions (logged as a warning). */
class ChangeWarning extends ValidationError {}

const DRAFTS: readonly unknown[] = ['draft-6', 'draft-7', 'draft-8']
const MAX_TIMER_MS = 2 ** 31 - 1

/** Every option express-rate-limit knows, and those it leaves to express-slow-down. */
const KNOWN_OPTIONS = new Set([
  'windowMs',
  'limit',
  'message',
  'statusCode',
  'legacyHeaders',
  'standardHeaders',
  'identifier',
  'retryAfter',
  'requestPropertyName',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'keyGenerator',
  'ipv6Subnet',
  'handler',
  'skip',
  'requestWasSuccessful',
  'store',
  'validate',
  'headers',
  'max',
  'passOnStoreError',
  'logger',
  'clock',
  'draft_polli_ratelimit_headers',
  'delayAfter',
  'delayMs',
  'maxDelayMs',
])

/** Stores seen by any limiter of this process, and keys counted per request and store. */
const seenStores = new WeakSet<object>()
const countedKeys = new WeakMap<object, Map<unknown, string[]>>()

type Check = (...args: never[]) => void

/** The checks, each returning nothing or throwing the error to log. */
const CHECKS = {
  ip(ip: string | undefined) {
    if (ip === undefined) {
      fail(
        'ERR_ERL_UNDEFINED_IP_ADDRESS',
        'request.ip is undefined: the connection may have closed early, or a proxy setting is wrong.',
      )
    }
    if (isIP(ip) === 0) {
      fail(
        'ERR_ERL_INVALID_IP_ADDRESS',
        `request.ip (${ip}) is not an IP address; pass a keyGenerator that returns a key for such requests.`,
      )
    }
  },
  trustProxy(request: Request) {
    if (request.app?.get('trust proxy') === true) {
      fail(
        'ERR_ERL_PERMISSIVE_TRUST_PROXY',
        "Express 'trust proxy' is true: any client can pick its own IP with X-Forwarded-For and escape the limit.",
      )
    }
  },
  xForwardedForHeader(request: Request) {
    if (request.headers?.['x-forwarded-for'] && request.app?.get('trust proxy') === false) {
      fail(
        'ERR_ERL_UNEXPECTED_X_FORWARDED_FOR',
        "X-Forwarded-For is present but Express 'trust proxy' is false: every client behind the proxy shares one key.",
      )
    }
  },
  forwardedHeader(request: Request) {
    if (request.headers?.forwarded && request.ip === request.socket?.remoteAddress) {
      fail(
        'ERR_ERL_FORWARDED_HEADER',
        'A Forwarded header is present but not read; use a keyGenerator that reads it if it comes from your proxy.',
      )
    }
  },
  positiveHits(hits: unknown) {
    if (typeof hits !== 'number' || hits < 1 || !Number.isInteger(hits)) {
      fail(
        'ERR_ERL_INVALID_HITS',
        `The store returned totalHits ${String(hits)}, not a positive integer.`,
      )
    }
  },
  unsharedStore(store: Store) {
    if (seenStores.has(store)) {
      const prefix = store.localKeys ? '' : ' (with its own prefix)'
      fail(
        'ERR_ERL_STORE_REUSE',
        `One ${store.constructor.name} serves two limiters; give each limiter a store of its own${prefix}.`,
      )
    }
    seenStores.add(store)
  },
  singleCount(request: Request, store: Store, key: string) {
    let byStore = countedKeys.get(request)
    if (byStore === undefined) {
      byStore = new Map()
      countedKeys.set(request, byStore)
    }
    const id = store.localKeys ? store : store.constructor.name
    let keys = byStore.get(id)
    if (keys === undefined) {
      keys = []
      byStore.set(id, keys)
    }
    const stored = `${store.prefix ?? ''}${key}`
    if (keys.includes(stored)) {
      fail('ERR_ERL_DOUBLE_COUNT', `Key ${key} was counted twice for one request.`)
    }
    keys.push(stored)
  },
  limit(limit: number) {
    if (limit === 0) {
      warn(
        'WRN_ERL_MAX_ZERO',
        'limit (or max) 0 blocks every request since express-rate-limit 7; it disabled limiting before.',
      )
    }
  },
  draftPolliHeaders(value?: unknown) {
    if (value) {
      warn(
        'WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS',
        "draft_polli_ratelimit_headers was removed in express-rate-limit 7; use standardHeaders: 'draft-6'.",
      )
    }
  },
  onLimitReached(value?: unknown) {
    if (value) {
      warn(
        'WRN_ERL_DEPRECATED_ON_LIMIT_REACHED',
        'onLimitReached was removed in express-rate-limit 7; use a handler.',
      )
    }
  },
  headersDraftVersion(version?: unknown) {
    if (!DRAFTS.includes(version)) {
      fail(
        'ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION',
        `standardHeaders: the drafts supported are ${DRAFTS.join(', ')}.`,
      )
    }
  },
  headersResetTime(resetTime?: Date) {
    if (!resetTime) {
      fail(
        'ERR_ERL_HEADERS_NO_RESET',
        'The standard headers need a resetTime the store did not give; windowMs is sent instead.',
      )
    }
  },
  knownOptions(options?: object) {
    for (const key of Object.keys(options ?? {})) {
      if (!KNOWN_OPTIONS.has(key)) fail('ERR_ERL_UNKNOWN_OPTION', `Unknown option: ${key}`)
    }
  },
  validationsConfig(this: { readonly enabled: Record<string, boolean> }) {
    const names = [...Object.keys(CHECKS), 'default']
    for (const key of Object.keys(this.enabled)) {
      if (!names.includes(key)) {
        fail(
          'ERR_ERL_UNKNOWN_VALIDATION',
          `validate.${key} is not a check; the checks are ${names.join(', ')}.`,
        )
      }
    }
  },
  creationStack(store: Store) {
    const { stack } = new Error('where the limiter was made')
    const inHandler =
      stack?.includes('Layer.handle [as handle_request]') || stack?.includes('Layer.handleRequest')
    if (!inHandler) return
    fail(
      'ERR_ERL_CREATED_IN_REQUEST_HANDLER',
      store.localKeys
        ? 'The limiter was made in a request handler: make it once, when the app starts, or each request gets a fresh count.'
        : 'The limiter was made in a request handler: it should usually be made once, when the app starts.',
    )
  },
  ipv6Subnet(subnet?: unknown) {
    if (subnet === false) return
    if (!Number.isInteger(subnet) || (subnet as number) < 32 || (subnet as number) > 64) {
      fail(
        'ERR_ERL_IPV6_SUBNET',
        `ipv6Subnet ${String(subnet)}: expected a whole number from 32 to 64 (usually 48 to 64).`,
      )
    }
  },
  ipv6SubnetOrKeyGenerator(options: Partial<Options>) {
    if (options.ipv6Subnet !== undefined && options.keyGenerator) {
      fail(
        'ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR',
        'ipv6Subnet is not read when a keyGenerator is given.',
      )
    }
  },
  keyGeneratorIpFallback(keyGenerator?: unknown) {
    if (typeof keyGenerator !== 'function') return
    const source = String(keyGenerator)
    const readsIp = source.includes('req.ip') || source.includes('request.ip')
    if (readsIp && !source.includes('ipKeyGenerator')) {
      fail(
        'ERR_ERL_KEY_GEN_IPV6',
        'The keyGenerator reads request.ip without ipKeyGenerator: an IPv6 client can rotate addresses to escape the limit.',
      )
    }
  },
  windowMs(windowMs: unknown) {
    if (typeof windowMs !== 'number' || !(windowMs >= 1 && windowMs <= MAX_TIMER_MS)) {
      const kind = typeof windowMs === 'number' ? '' : ` (${typeof windowMs})`
      fail(
        'ERR_ERL_WINDOW_MS',
        `windowMs ${String(windowMs)}${kind}: the memory store needs a number from 1 to ${MAX_TIMER_MS}.`,
      )
    }
  },
} satisfies Record<string, Check>

function fail(code: string, message: string): never {
  throw new ValidationError(code, message)
}

function warn(code: string, message: string): never {
  throw new ChangeWarning(code, message)
}

type CheckName = keyof typeof CHECKS

function skipped(): void {}

/** The checks of one limiter: each runs once, then never again. */
export type Validations = { readonly enabled: Record<string, boolean> } & {
  readonly [name in CheckName]: (...args: Parameters<(typeof CHECKS)[name]>) => void
}

/** The checks of one limiter, reporting to `logger`. */
export function createValidations(
  setting: boolean | EnabledValidations,
  logger: Logger,
): Validations {
  const enabled: Record<string, boolean> =
    typeof setting === 'boolean' ? { default: setting } : { default: true, ...setting }
  const validations = { enabled } as { enabled: Record<string, boolean> } & Record<string, Check>
  for (const [name, check] of Object.entries(CHECKS)) {
    validations[name] = (...args) => {
      // Each check runs once: from then on its wrapper is a no-op (a request pays nothing).
      validations[name] = skipped
      if (!(enabled[name] ?? enabled['default'])) return
      enabled[name] = false
      try {
        ;(check as (...a: unknown[]) => void).apply(validations, args)
      } catch (error) {
        if (error instanceof ChangeWarning) logger.warn(error)
        else logger.error(error)
      }
    }
  }
  return validations as unknown as Validations
}
