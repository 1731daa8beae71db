/**
 * What the scenario files share: the types of a scenario and the helpers their rules and
 * expectations are written with.
 */
import { createHash } from 'node:crypto'
import type { CoreOptions, Decision, ResponseSettler, RuleConfig, Store } from '@tollgate/express'

/** 2026-01-01T00:00:00Z: a whole second, so epoch-second resets are easy to read. */
export const T0 = Date.UTC(2026, 0, 1)
/** `X-RateLimit-Reset` for a quota that is full again `seconds` after T0. */
export const resetAt = (seconds: number) => String(T0 / 1000 + seconds)

export type Expect = {
  readonly status: number
  /** Headers that must be present with this value, or (undefined) absent. Names lower-case. */
  readonly headers?: Readonly<Record<string, string | undefined>>
  /** Fields the JSON body must have (denials), or the exact text body. */
  readonly body?: Readonly<Record<string, unknown>> | string
}

type Step = {
  /** Ms to move the clock before sending. */
  readonly advance?: number
  readonly method?: string
  readonly path?: string
  readonly headers?: Readonly<Record<string, string>>
  /** Sends the same request this many times; `expect` may then depend on the index. */
  readonly times?: number
  readonly expect: Expect | ((index: number) => Expect)
}

export type Scenario = {
  readonly name: string
  readonly rules: readonly RuleConfig[]
  readonly options?: CoreOptions
  /** A fresh store for each target (the default memory store otherwise). */
  readonly store?: () => Store
  readonly skipPaths?: readonly string[]
  readonly refund?: 'failed' | 'succeeded'
  readonly steps: readonly Step[]
  /** How many requests shadow rules would have denied (the `onShadowDenied` hook). */
  readonly shadowDenied?: number
  /** The `onShadowDenied` hook throws, or returns a promise that rejects, after counting. */
  readonly shadowHookFails?: 'throws' | 'rejects'
  /** Warning codes the scenario must log (each once). */
  readonly warnings?: readonly string[]
  /** The middleware's `settle` option. */
  readonly settle?: ResponseSettler
  /** An `estimate` option reading `x-test-estimate` (the rule's cost without it). */
  readonly estimate?: true
}

export const perIp = (rate: number, burst: number, extra: Partial<RuleConfig> = {}): RuleConfig =>
  ({
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate,
    burst,
    ...extra,
  }) as RuleConfig

/** A shadow rule that would deny every request after the first. */
export const SHADOW_TIGHT: RuleConfig = {
  id: 'shadow-tight',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  burst: 1,
  mode: 'shadow',
}

export const ok = (
  remaining: number,
  headers: Record<string, string | undefined> = {},
): Expect => ({
  status: 200,
  headers: { 'x-ratelimit-remaining': String(remaining), ...headers },
  body: 'ok',
})

const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded'

export const denied = (retryAfter: number, policies: string[], headers = {}): Expect => ({
  status: 429,
  headers: {
    'retry-after': String(retryAfter),
    'content-type': 'application/problem+json',
    'x-ratelimit-remaining': '0',
    ...headers,
  },
  body: { type: QUOTA_EXCEEDED, status: 429, 'violated-policies': policies, retryAfter },
})

/** A store that is down: every call throws (or rejects, for the asynchronous path). */
export const downStore =
  (async: boolean): (() => Store) =>
  () => ({
    consume: () => {
      if (async) return Promise.reject(new Error('connection refused'))
      throw new Error('connection refused')
    },
    refund: () => {},
  })

/** A store that answers, but not with a decision: as much a failure as one that is down. */
export const garbledStore = (): Store => ({
  consume: (charges) => ({
    decisions: charges.map(() => ({ allowed: 'yes' }) as unknown as Decision),
    at: Date.now(),
  }),
  refund: () => {},
})

/** The documented `pk`: the first 12 bytes of SHA-256 over the key, as a byte sequence. */
export const partitionKey = (key: string) =>
  `:${createHash('sha256').update(key).digest().subarray(0, 12).toString('base64')}:`

export const forwardedFor = (value: string) => ({ 'x-forwarded-for': value })
