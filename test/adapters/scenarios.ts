/**
 * One table of HTTP scenarios, run against every adapter and transport (see adapters.test.ts).
 * Each step sends a request (after moving the manual clock, if asked) and states what must come
 * back; on top of that, every target must answer every request with the same status, headers and
 * body. Figures are worked out by hand from the rules (see the comment on each step).
 */
import { createHash } from 'node:crypto'
import type { CoreOptions, Decision, RuleConfig, Store } from '@tollgate/express'

/** 2026-01-01T00:00:00Z: a whole second, so epoch-second resets are easy to read. */
export const T0 = Date.UTC(2026, 0, 1)
/** `X-RateLimit-Reset` for a quota that is full again `seconds` after T0. */
const resetAt = (seconds: number) => String(T0 / 1000 + seconds)

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
}

const perIp = (rate: number, burst: number, extra: Partial<RuleConfig> = {}): RuleConfig =>
  ({
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate,
    burst,
    ...extra,
  }) as RuleConfig

/** A shadow rule that would deny every request after the first. */
const SHADOW_TIGHT: RuleConfig = {
  id: 'shadow-tight',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  burst: 1,
  mode: 'shadow',
}

const ok = (remaining: number, headers: Record<string, string | undefined> = {}): Expect => ({
  status: 200,
  headers: { 'x-ratelimit-remaining': String(remaining), ...headers },
  body: 'ok',
})

const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded'

const denied = (retryAfter: number, policies: string[], headers = {}): Expect => ({
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
const downStore =
  (async: boolean): (() => Store) =>
  () => ({
    consume: () => {
      if (async) return Promise.reject(new Error('connection refused'))
      throw new Error('connection refused')
    },
    refund: () => {},
  })

/** A store that answers, but not with a decision: as much a failure as one that is down. */
const garbledStore = (): Store => ({
  consume: (charges) => ({
    decisions: charges.map(() => ({ allowed: 'yes' }) as unknown as Decision),
    at: Date.now(),
  }),
  refund: () => {},
})

/** The documented `pk`: the first 12 bytes of SHA-256 over the key, as a byte sequence. */
const partitionKey = (key: string) =>
  `:${createHash('sha256').update(key).digest().subarray(0, 12).toString('base64')}:`

const forwardedFor = (value: string) => ({ 'x-forwarded-for': value })

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'a burst empties the bucket, then 429 with Retry-After until it refills (spec figure)',
    rules: [perIp(10, 20)],
    steps: [
      // Burst 20 at 10/s: 20 pass (19 … 0 left), each back to full 100 ms per spent token.
      {
        times: 20,
        expect: (i) =>
          ok(19 - i, {
            'x-ratelimit-limit': '20',
            'x-ratelimit-reset': resetAt(Math.ceil(((i + 1) * 100) / 1000)),
            'ratelimit-policy': '"per-ip";q=10;w=1;burst=20',
            ratelimit: `"per-ip";r=${19 - i};t=${Math.ceil(((i + 1) * 100) / 1000)}`,
          }),
      },
      // The 5 others wait 100 ms for a token: Retry-After rounds up to 1 s; full in 2 s.
      {
        times: 5,
        expect: denied(1, ['per-ip'], {
          'x-ratelimit-reset': resetAt(2),
          ratelimit: '"per-ip";r=0;t=1',
        }),
      },
      // Half a second refills 5 tokens: 5 pass, 3 wait.
      { advance: 500, times: 5, expect: (i) => ok(4 - i) },
      { times: 3, expect: denied(1, ['per-ip']) },
      // Two idle seconds refill the bucket to exactly 20 (never more).
      { advance: 2000, expect: ok(19) },
    ],
  },
  {
    name: 'a route cost charges 10 units; a cost that does not fit waits for 10 tokens',
    rules: [
      {
        id: 'labels-bulk',
        match: { route: 'POST /v1/labels:batch', identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 20,
        costByRoute: { 'POST /v1/labels:batch': 10 },
      },
    ],
    steps: [
      { method: 'POST', path: '/v1/labels:batch', headers: { 'x-api-key': 'k_1' }, expect: ok(10) },
      { method: 'POST', path: '/v1/labels:batch', headers: { 'x-api-key': 'k_1' }, expect: ok(0) },
      // 10 tokens at 10/s: 1 s.
      {
        method: 'POST',
        path: '/v1/labels:batch',
        headers: { 'x-api-key': 'k_1' },
        expect: denied(1, ['labels-bulk']),
      },
      // Another key has its own bucket; another method is not this rule's route.
      { method: 'POST', path: '/v1/labels:batch', headers: { 'x-api-key': 'k_2' }, expect: ok(10) },
      {
        path: '/v1/labels:batch',
        headers: { 'x-api-key': 'k_1' },
        expect: {
          status: 200,
          headers: { 'x-ratelimit-remaining': undefined, ratelimit: undefined },
        },
      },
      // The query string is not part of the route.
      {
        advance: 1000,
        method: 'POST',
        path: '/v1/labels:batch?dry=1',
        headers: { 'x-api-key': 'k_1' },
        expect: ok(0),
      },
    ],
  },
  {
    name: 'several rules decide as one unit: the login limit denies, and charges nothing to per-ip',
    rules: [
      perIp(1, 5),
      {
        id: 'login-per-ip',
        match: { route: 'POST /v1/login', identity: 'ip' },
        algorithm: 'sliding_log',
        limit: 3,
        window: '60s',
      },
    ],
    steps: [
      // The deciding rule (fewest left) is login-per-ip; RateLimit lists both, in rule order.
      {
        method: 'POST',
        path: '/v1/login',
        expect: ok(2, {
          'x-ratelimit-limit': '3',
          'x-ratelimit-reset': resetAt(60),
          'ratelimit-policy': '"per-ip";q=1;w=1;burst=5, "login-per-ip";q=3;w=60',
          ratelimit: '"per-ip";r=4;t=1, "login-per-ip";r=2;t=60',
        }),
      },
      {
        method: 'POST',
        path: '/v1/login',
        times: 2,
        expect: (i) =>
          ok(1 - i, {
            ratelimit: `"per-ip";r=${3 - i};t=${2 + i}, "login-per-ip";r=${1 - i};t=60`,
          }),
      },
      // The 4th login waits for the oldest attempt to leave the 60 s log; per-ip keeps its 2.
      {
        method: 'POST',
        path: '/v1/login',
        expect: denied(60, ['login-per-ip'], {
          'x-ratelimit-limit': '3',
          ratelimit: '"per-ip";r=2;t=3, "login-per-ip";r=0;t=60',
        }),
      },
      {
        path: '/v1/orders',
        expect: ok(1, { 'x-ratelimit-limit': '5', ratelimit: '"per-ip";r=1;t=4' }),
      },
    ],
  },
  {
    name: 'a shadow rule never denies, is reported through the hook, and is not advertised',
    rules: [perIp(10, 10), SHADOW_TIGHT],
    steps: [
      {
        times: 3,
        expect: (i) =>
          ok(9 - i, {
            'ratelimit-policy': '"per-ip";q=10;w=1',
            ratelimit: `"per-ip";r=${9 - i};t=1`,
          }),
      },
    ],
    shadowDenied: 2,
  },
  ...(['throws', 'rejects'] as const).map(
    (fails): Scenario => ({
      name: `an onShadowDenied hook that ${fails} is logged once, and the request goes on`,
      rules: [perIp(10, 10), SHADOW_TIGHT],
      steps: [{ times: 3, expect: (i) => ok(9 - i) }],
      shadowDenied: 2,
      shadowHookFails: fails,
      warnings: ['WARN_ON_SHADOW_DENIED_THREW'],
    }),
  ),
  {
    name: 'with no proxy trusted, X-Forwarded-For is ignored (and its presence warned about once)',
    rules: [perIp(10, 10)],
    steps: [
      { headers: forwardedFor('203.0.113.1'), expect: ok(9) },
      { headers: forwardedFor('203.0.113.2'), expect: ok(8) },
      { expect: ok(7) },
    ],
    warnings: ['WARN_FORWARDED_HEADERS_IGNORED'],
  },
  {
    name: 'behind a trusted loopback proxy, the client cannot pick its key by spoofing X-Forwarded-For',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback' },
    steps: [
      { headers: forwardedFor('203.0.113.7'), expect: ok(9) },
      // The proxy appended the real client; what the client wrote to the left is never read.
      { headers: forwardedFor('198.51.100.1, 203.0.113.7'), expect: ok(8) },
      { headers: forwardedFor('203.0.113.8'), expect: ok(9) },
      // No header: the proxy itself is the client. Forwarded is not the configured header.
      { expect: ok(9) },
      { headers: { forwarded: 'for=192.0.2.1' }, expect: ok(8) },
    ],
  },
  {
    name: 'through a proxy that is not trusted, forwarding headers are ignored',
    rules: [perIp(10, 10)],
    options: { trustProxy: ['10.0.0.0/8'] },
    steps: [
      { headers: forwardedFor('203.0.113.1'), expect: ok(9) },
      { headers: forwardedFor('203.0.113.2'), expect: ok(8) },
    ],
  },
  {
    name: 'RFC 7239 Forwarded, when configured, is walked the same way',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback', proxyHeader: 'forwarded' },
    steps: [
      { headers: { forwarded: 'for=203.0.113.7' }, expect: ok(9) },
      { headers: { forwarded: 'for=198.51.100.1, for=203.0.113.7;proto=https' }, expect: ok(8) },
      { headers: { forwarded: 'for="[2001:db8::1]:4711"' }, expect: ok(9) },
      { headers: forwardedFor('203.0.113.7'), expect: ok(9) },
    ],
  },
  {
    name: 'IPv6 clients are keyed by /64, IPv4-mapped addresses as IPv4',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback' },
    steps: [
      { headers: forwardedFor('2001:db8:1:2::a'), expect: ok(9) },
      { headers: forwardedFor('2001:db8:1:2:ffff::b'), expect: ok(8) },
      { headers: forwardedFor('2001:db8:1:3::a'), expect: ok(9) },
      { headers: forwardedFor('::ffff:203.0.113.7'), expect: ok(9) },
      { headers: forwardedFor('203.0.113.7'), expect: ok(8) },
    ],
  },
  {
    name: 'a wider IPv6 prefix puts a whole /48 in one bucket',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback', ipv6Prefix: 48 },
    steps: [
      { headers: forwardedFor('2001:db8:1:2::a'), expect: ok(9) },
      { headers: forwardedFor('2001:db8:1:3::a'), expect: ok(8) },
      { headers: forwardedFor('2001:db8:2::1'), expect: ok(9) },
    ],
  },
  {
    name: 'a request without the API key a rule refuses to go without gets a 400, not a free pass',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 10,
        onMissingIdentity: 'deny',
      },
    ],
    steps: [
      {
        times: 2,
        expect: {
          status: 400,
          headers: {
            'content-type': 'application/problem+json',
            'retry-after': undefined,
            'x-ratelimit-remaining': undefined,
          },
          body: { status: 400, code: 'missing-identity' },
        },
      },
      { headers: { 'x-api-key': 'k_1' }, expect: ok(9) },
    ],
  },
  {
    name: 'the missing-identity answer can be a 401 with a challenge',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 10,
        onMissingIdentity: 'deny',
      },
    ],
    options: { missingIdentity: { status: 401, wwwAuthenticate: 'ApiKey realm="shiplane"' } },
    steps: [
      {
        expect: {
          status: 401,
          headers: { 'www-authenticate': 'ApiKey realm="shiplane"' },
          body: { status: 401, code: 'missing-identity' },
        },
      },
    ],
  },
  {
    name: 'without its API key (here a custom header), a request is counted under its IP',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 10,
      },
    ],
    options: { apiKeyHeader: 'x-goog-api-key' },
    steps: [
      { expect: ok(9) },
      { headers: { 'x-api-key': 'k_1' }, expect: ok(8) },
      { headers: { 'x-goog-api-key': 'k_1' }, expect: ok(9) },
    ],
  },
  {
    name: 'the signed-in user is read where the framework keeps it; anonymous requests fall back to the IP',
    rules: [
      { id: 'per-user', match: { identity: 'user' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
    ],
    steps: [
      { headers: { 'x-test-user': 'u1' }, times: 2, expect: (i) => ok(1 - i) },
      { headers: { 'x-test-user': 'u1' }, expect: denied(1, ['per-user']) },
      { headers: { 'x-test-user': 'u2' }, expect: ok(1) },
      { expect: ok(1) },
    ],
  },
  {
    name: 'rules match on the plan the app reports',
    rules: [
      {
        id: 'free-global',
        match: { plan: 'free', identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 1,
      },
    ],
    steps: [
      { headers: { 'x-test-plan': 'free' }, expect: ok(0) },
      { headers: { 'x-test-plan': 'free' }, expect: denied(1, ['free-global']) },
      {
        headers: { 'x-test-plan': 'pro' },
        expect: { status: 200, headers: { ratelimit: undefined } },
      },
      { expect: { status: 200, headers: { ratelimit: undefined } } },
    ],
  },
  {
    name: 'a composite key limits logins per account and IP together',
    rules: [
      {
        id: 'login-account-ip',
        match: { route: 'POST /v1/login', identity: ['account', 'ip'] },
        algorithm: 'sliding_log',
        limit: 2,
        window: '60s',
      },
    ],
    steps: [
      {
        method: 'POST',
        path: '/v1/login',
        headers: { 'x-account': 'alice' },
        times: 2,
        expect: (i) => ok(1 - i),
      },
      {
        method: 'POST',
        path: '/v1/login',
        headers: { 'x-account': 'alice' },
        expect: denied(60, ['login-account-ip']),
      },
      { method: 'POST', path: '/v1/login', headers: { 'x-account': 'bob' }, expect: ok(1) },
      { method: 'POST', path: '/v1/login', expect: ok(1) },
    ],
  },
  {
    name: 'routes with parameters match any value, never the query string or a longer path',
    rules: [
      {
        id: 'orders',
        match: { route: '/v1/orders/:id', identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 2,
        window: '60s',
      },
    ],
    steps: [
      { path: '/v1/orders/42?expand=items', expect: ok(1, { 'x-ratelimit-reset': resetAt(60) }) },
      { path: '/v1/orders/43', expect: ok(0) },
      { path: '/v1/orders/44', expect: denied(60, ['orders']) },
      { path: '/v1/orders', expect: { status: 200, headers: { ratelimit: undefined } } },
      { path: '/v1/orders/44/items', expect: { status: 200, headers: { ratelimit: undefined } } },
    ],
  },
  {
    name: 'failed requests are refunded when asked; denied ones are not',
    rules: [perIp(1, 2)],
    refund: 'failed',
    steps: [
      // Each 500 shows what it was charged, then gets it back.
      {
        path: '/fail',
        times: 3,
        expect: { status: 500, headers: { 'x-ratelimit-remaining': '1' }, body: 'failed' },
      },
      { expect: ok(1) },
      { expect: ok(0) },
      { path: '/fail', expect: denied(1, ['per-ip']) },
      { expect: denied(1, ['per-ip']) },
    ],
  },
  {
    name: 'a refund after its fixed window has rolled over gives nothing back to the new window',
    rules: [
      {
        id: 'per-ip',
        match: { identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 2,
        window: '10s',
      },
    ],
    refund: 'failed',
    steps: [
      { expect: ok(1, { 'x-ratelimit-reset': resetAt(10) }) },
      // Charged at 9 s in the first window; the handler takes 2 s, so the refund comes at 11 s.
      {
        advance: 9000,
        path: '/fail/advance/2000',
        expect: { status: 500, headers: { 'x-ratelimit-remaining': '0' } },
      },
      { expect: ok(1, { 'x-ratelimit-reset': resetAt(20) }) },
      { expect: ok(0) },
      { expect: denied(9, ['per-ip']) },
      // Within one window the refund does count: 1 left after a refunded failure, not 0.
      {
        advance: 9000,
        path: '/fail/advance/1000',
        expect: { status: 500, headers: { 'x-ratelimit-remaining': '1' } },
      },
      { expect: ok(1) },
    ],
  },
  {
    name: 'refunding successes counts only failures (e.g. failed logins)',
    rules: [
      {
        id: 'failures',
        match: { identity: 'ip' },
        algorithm: 'sliding_log',
        limit: 2,
        window: '60s',
      },
    ],
    refund: 'succeeded',
    steps: [
      { times: 3, expect: ok(1) },
      {
        path: '/fail',
        times: 2,
        expect: (i) => ({ status: 500, headers: { 'x-ratelimit-remaining': String(1 - i) } }),
      },
      { path: '/fail', expect: denied(60, ['failures']) },
      { expect: denied(60, ['failures']) },
    ],
  },
  {
    name: 'skipped requests are neither counted nor limited',
    rules: [perIp(1, 1)],
    skipPaths: ['/health'],
    steps: [
      {
        path: '/health',
        times: 3,
        expect: { status: 200, headers: { 'x-ratelimit-remaining': undefined } },
      },
      { expect: ok(0) },
      { expect: denied(1, ['per-ip']) },
      { path: '/health', expect: { status: 200, headers: { ratelimit: undefined } } },
    ],
  },
  {
    name: 'a store that throws lets fail-open rules through, with no made-up figures',
    rules: [perIp(10, 10)],
    store: downStore(false),
    steps: [
      {
        times: 2,
        expect: {
          status: 200,
          headers: { 'x-ratelimit-remaining': undefined, ratelimit: undefined },
          body: 'ok',
        },
      },
    ],
    warnings: ['allowed (fail-open)'],
  },
  {
    name: 'a store that rejects makes a fail-closed rule answer 503 with a short Retry-After, never 500',
    rules: [perIp(10, 10, { id: 'per-ip-closed', onStoreError: 'closed' }), perIp(10, 10)],
    store: downStore(true),
    steps: [
      {
        expect: {
          status: 503,
          headers: {
            'retry-after': '1',
            'content-type': 'application/problem+json',
            ratelimit: undefined,
          },
          body: {
            type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
            status: 503,
            'violated-policies': ['per-ip-closed'],
            retryAfter: 1,
          },
        },
      },
    ],
    warnings: ['denied (fail-closed)'],
  },
  {
    name: 'a store answering garbage follows each rule’s onStoreError, never 500',
    rules: [perIp(10, 10, { id: 'per-ip-closed', onStoreError: 'closed' })],
    store: garbledStore,
    steps: [
      {
        expect: {
          status: 503,
          headers: { 'retry-after': '1', ratelimit: undefined, 'x-ratelimit-remaining': undefined },
          body: {
            type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
            status: 503,
            'violated-policies': ['per-ip-closed'],
            retryAfter: 1,
          },
        },
      },
    ],
    warnings: ['denied (fail-closed)'],
  },
  {
    name: 'draft-7 fields, reset as seconds from now, exposed to browsers',
    rules: [perIp(10, 20)],
    options: { standardHeaders: 'draft-7', legacyReset: 'delta-seconds', exposeHeaders: true },
    steps: [
      {
        expect: ok(19, {
          'x-ratelimit-reset': '1',
          'ratelimit-policy': '10;w=1;burst=20',
          ratelimit: 'limit=20, remaining=19, reset=1',
          'access-control-expose-headers':
            'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After',
        }),
      },
    ],
  },
  {
    name: 'draft-6 fields only',
    rules: [perIp(10, 20)],
    options: { standardHeaders: 'draft-6', legacyHeaders: false },
    steps: [
      {
        expect: {
          status: 200,
          headers: {
            'x-ratelimit-remaining': undefined,
            'ratelimit-limit': '20',
            'ratelimit-remaining': '19',
            'ratelimit-reset': '1',
            'ratelimit-policy': '10;w=1;burst=20',
          },
        },
      },
    ],
  },
  {
    name: 'partition keys: a hash of the rate-limit key, by Web Crypto, in both current-form fields',
    rules: [perIp(10, 20)],
    options: { partitionKey: true },
    steps: [
      {
        expect: ok(19, {
          'ratelimit-policy': `"per-ip";q=10;w=1;burst=20;pk=${partitionKey('ip:127.0.0.1')}`,
          ratelimit: `"per-ip";r=19;t=1;pk=${partitionKey('ip:127.0.0.1')}`,
        }),
      },
    ],
  },
]
