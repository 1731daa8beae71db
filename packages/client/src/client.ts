import type { Clock } from '@tollgate/core'
import { readRateLimitFields } from '@tollgate/core/fields'
import {
  checkWhole,
  createScheduler,
  refuseUnknownOptions,
  type Scheduler,
  type Timers,
} from '@tollgate/core/store'
import { type ClientEvent, type EventListener, emitter } from './events.js'
import { createLearnedPolicies } from './learned-policies.js'
import type { LocalLimiter } from './local-limiter.js'
import { learnedJitterMs, type RetryOptions, resolveRetry, withJitter } from './retry-policy.js'
import { type Completion, sendWithRetries } from './send.js'
import { addSpend, NOTHING, type Spend, spendOf, type TokenEstimate } from './spend.js'

/**
 * Options of `createClient`: what it sends with, how it throttles itself, and how it retries and
 * learns from the server's answers.
 */
export type ClientOptions = {
  /** The fetch to send with: the runtime's, undici's, a service binding's. @default globalThis.fetch */
  readonly fetch?: ((request: Request) => Promise<Response>) | undefined
  /**
   * Throttle yourself to a vendor's published limits: one local limiter for every call, or one
   * per request (undefined: none for this one).
   */
  readonly limiter?: LocalLimiter | ((request: Request) => LocalLimiter | undefined) | undefined
  /**
   * Units a request spends, locally and against learned policies that count requests.
   * @default 1
   */
  readonly cost?: ((request: Request) => number) | undefined
  /**
   * The tokens a request is expected to spend, against the token policies an LLM API
   * announces (OpenAI's `x-ratelimit-*-tokens`, Anthropic's `anthropic-ratelimit-*tokens-*`):
   * a total, or `{ input, output }` to charge Anthropic's input and output limits each its
   * part. It may read the body (`await request.clone().text()`); fractions are rounded up.
   * Give one when calls are large: without it a call counts as one token, so a token policy
   * holds calls back only once the server says it is spent.
   * @default 1
   * @example tokens: async (request) => ({ input: estimate(await request.clone().text()), output: 1024 })
   */
  readonly tokens?: ((request: Request) => TokenEstimate | Promise<TokenEstimate>) | undefined
  /** `false` never retries. */
  readonly retry?: RetryOptions | false | undefined
  /**
   * Learn each origin's policies from the fields it sends and wait before a call it would
   * refuse. `maxPolicies` bounds what is kept (least recently used dropped first). @default true
   */
  readonly learn?: boolean | { readonly maxPolicies?: number | undefined } | undefined
  /**
   * Splits an origin's learned policies by something of the request (an API key, a tenant):
   * callers with different budgets at one origin then do not slow each other.
   * @default the origin alone
   */
  readonly partition?: ((request: Request) => string | undefined) | undefined
  /** The most jitter added to any advertised or learned wait (ms). @default 1000 */
  readonly maxJitterMs?: number | undefined
  /** Called for every wait, retry and give-up. */
  readonly onEvent?: EventListener | undefined
  readonly clock?: Clock | undefined
  readonly timers?: Timers | undefined
  /** Share one scheduler (one timer) with local limiters. */
  readonly scheduler?: Scheduler | undefined
  /** A number in [0, 1), for jitter. @default Math.random */
  readonly random?: (() => number) | undefined
}

/**
 * What `createClient` returns: a `fetch` that throttles itself, waits as the server asks and
 * retries refusals.
 */
export type TollgateClient = {
  /** `fetch`, with self-throttling, learned waits and retries of refusals. */
  readonly fetch: (input: Request | string | URL, init?: RequestInit) => Promise<Response>
  /**
   * Waits as `fetch` would before sending `request` (local limiter, learned policies) and counts
   * it as sent. For clients with their own sending loop (ky hooks, undici interceptors): call
   * the returned function with the response, or with undefined if the request failed.
   */
  readonly prepare: (
    request: Request,
    signal?: AbortSignal,
    deadline?: number,
  ) => Promise<Completion>
  /** How many policies the client currently remembers. */
  readonly learnedPolicies: () => number
}

const DEFAULT_MAX_POLICIES = 1000

/**
 * @example
 * const api = createClient({
 *   limiter: localLimiter({ algorithm: 'token_bucket', rate: 10, period: '1s', burst: 10 }),
 * })
 * const res = await api.fetch('https://api.example.com/v1/items')
 */
/** Every option `createClient` takes (the type makes sure none is left out). */
const OPTION_NAMES = Object.keys({
  fetch: true,
  limiter: true,
  cost: true,
  tokens: true,
  retry: true,
  learn: true,
  partition: true,
  maxJitterMs: true,
  onEvent: true,
  clock: true,
  timers: true,
  scheduler: true,
  random: true,
} satisfies Record<keyof ClientOptions, true>)

/**
 * A client for a rate-limited API: it waits for its own limiter, learns each policy from the
 * `RateLimit` and `Retry-After` fields it receives, and retries a 429 or 503 after the wait the
 * server asked for.
 * @example
 * const api = createClient({
 *   limiter: localLimiter({ algorithm: 'token_bucket', rate: 10, period: '1s', burst: 10 }),
 * })
 * const res = await api.fetch('https://api.example.com/v1/items')
 */
export function createClient(options: ClientOptions = {}): TollgateClient {
  refuseUnknownOptions(options, OPTION_NAMES, 'createClient()')
  if (typeof options.learn === 'object' && options.learn !== null) {
    refuseUnknownOptions(options.learn, ['maxPolicies'], 'createClient() learn')
  }
  const scheduler = options.scheduler ?? createScheduler(options)
  const retry = resolveRetry(options.retry)
  const random = options.random ?? Math.random
  const emit = emitter(options.onEvent)
  const maxJitterMs = checkWhole(
    'maxJitterMs',
    options.maxJitterMs ?? 1000,
    { min: 0, unit: 'ms' },
    'createClient()',
  )
  const learn = options.learn ?? true
  const maxPolicies = checkWhole(
    'learn.maxPolicies',
    typeof learn === 'object' ? (learn.maxPolicies ?? DEFAULT_MAX_POLICIES) : DEFAULT_MAX_POLICIES,
    { min: 1 },
    'createClient()',
  )
  const learned = learn === false ? undefined : createLearnedPolicies(maxPolicies)
  /** Per scope: calls sent and not yet answered, and what they spend. */
  const inFlight = new Map<string, { calls: number; spend: Spend }>()
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request))

  const scopeOf = (request: Request) => {
    const origin = new URL(request.url).origin
    const partition = options.partition?.(request)
    return partition === undefined ? origin : `${origin} ${partition}`
  }
  const limiterOf = (request: Request) =>
    typeof options.limiter === 'function' ? options.limiter(request) : options.limiter

  async function prepare(
    request: Request,
    signal?: AbortSignal,
    deadline?: number,
  ): Promise<Completion> {
    const cost = options.cost?.(request) ?? 1
    // Awaited only when given: a call without an estimate keeps its place in the tick.
    const estimate = options.tokens === undefined ? undefined : await options.tokens(request)
    const spend = spendOf(cost, estimate)
    const scope = scopeOf(request)
    const url = request.url
    if (learned !== undefined) {
      for (let wait = learned.waitFor(scope, spend, scheduler.now()); wait !== undefined; ) {
        const jittered = wait.untilReset
          ? withJitter(wait.delayMs, learnedJitterMs(wait.delayMs, maxJitterMs), random)
          : wait.delayMs
        // Past the deadline the server has the last word: send, and let its answer be returned.
        // A wait that fits the budget is not pushed out of it by its jitter: the jitter is cut.
        const left = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - scheduler.now()
        if (wait.delayMs > left) break
        const delayMs = Math.min(jittered, left)
        emit({ type: 'wait', reason: 'learned', policy: wait.policy, delayMs, url })
        await scheduler.sleep(delayMs, signal)
        wait = learned.waitFor(scope, spend, scheduler.now())
      }
    }
    const limiter = limiterOf(request)
    if (limiter !== undefined) {
      const delayMs = limiter.reserve(cost)
      // Infinity: a queue rule refuses the call, so acquire rejects and nothing is waited.
      if (delayMs > 0 && delayMs !== Number.POSITIVE_INFINITY) {
        emit({ type: 'wait', reason: 'limiter', policy: undefined, delayMs, url })
      }
      await limiter.acquire({ cost, signal })
    }
    learned?.spend(scope, spend, scheduler.now())
    const sent = inFlight.get(scope) ?? { calls: 0, spend: NOTHING }
    inFlight.set(scope, { calls: sent.calls + 1, spend: addSpend(sent.spend, spend) })
    let completed = false
    return (response) => {
      if (completed) return undefined
      completed = true
      const before = inFlight.get(scope)!
      const others = { calls: before.calls - 1, spend: addSpend(before.spend, spend, -1) }
      if (others.calls === 0) inFlight.delete(scope)
      else inFlight.set(scope, others)
      if (response === undefined) return undefined
      const now = scheduler.now()
      const fields = readRateLimitFields(response.headers, now)
      learned?.learn(scope, fields, retry.statuses.has(response.status), now, others.spend)
      return fields
    }
  }

  return {
    fetch: (input, init) =>
      sendWithRetries(new Request(input, init), {
        prepare,
        send,
        retry,
        scheduler,
        random,
        maxJitterMs,
        emit,
      }),
    prepare,
    learnedPolicies: () => learned?.size() ?? 0,
  }
}

export type { ClientEvent }
