/** The specification's scenarios, as requests at simulated times. */

/** One simulated client request. The demo stands in for the load balancer in front of the gateway. */
export type SimRequest = {
  readonly method: 'GET' | 'POST'
  readonly path: string
  /** Sent as `X-Api-Key`. */
  readonly apiKey?: string
  /** The client's real address: the load balancer appends it to `X-Forwarded-For`. */
  readonly clientIp: string
  /** What the client itself wrote in `X-Forwarded-For`, hoping to pick its own key. */
  readonly spoofed?: string
}

/** Requests sent one after another at one instant. */
export type Moment = {
  /** Ms after the demo's start (12:00:00 UTC). */
  readonly at: number
  /** How the spec names the instant, e.g. `t = 0.5 s`; else the clock time is shown. */
  readonly label?: string
  readonly requests: readonly SimRequest[]
}

export type Scenario = {
  readonly id: 'free-burst' | 'bulk' | 'login' | 'spoofing'
  readonly title: string
  /** What to look for, printed under the title. */
  readonly notes: readonly string[]
  readonly moments: readonly Moment[]
}

const times = (count: number, request: SimRequest): SimRequest[] =>
  Array.from({ length: count }, () => request)

const quote: SimRequest = {
  method: 'GET',
  path: '/v1/quotes',
  apiKey: 'k_free_acme',
  clientIp: '198.51.100.23',
}
const bulk: SimRequest = {
  method: 'POST',
  path: '/v1/labels:batch',
  apiKey: 'k_growth_globex',
  clientIp: '192.0.2.140',
}
const ATTACKER = '203.0.113.95'
const login: SimRequest = { method: 'POST', path: '/v1/login', clientIp: ATTACKER }

const MINUTE = 60_000
const SECOND = 1000

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'free-burst',
    title: 'The Free plan burst: token bucket, 10 per second, burst 20 (merchant k_free_acme)',
    notes: [
      '25 requests at t = 0, 8 more at 0.5 s, one at 2.5 s. The bucket starts full at 20;',
      'half a second refills 5; two idle seconds refill it to exactly 20, never more.',
      'Denied requests consume nothing, from free-global or from the daily quota.',
    ],
    moments: [
      { at: 0, label: 't = 0 s', requests: times(25, quote) },
      { at: 500, label: 't = 0.5 s', requests: times(8, quote) },
      { at: 2500, label: 't = 2.5 s', requests: [quote] },
    ],
  },
  {
    id: 'bulk',
    title: 'A bulk label call costs 10 (labels-bulk, merchant k_growth_globex)',
    notes: [
      'POST /v1/labels:batch spends 10 of the 20-unit burst; the third call has to wait',
      'for 10 units at 10 per second: Retry-After 1. One second later it passes.',
    ],
    moments: [
      { at: 3 * SECOND, requests: times(3, bulk) },
      { at: 4 * SECOND, requests: [bulk] },
    ],
  },
  {
    id: 'login',
    title: `Login hammering: sliding log, 5 per 60 s per IP (${ATTACKER})`,
    notes: [
      'The log keeps admitted attempts only, so hammering does not push the retry time back:',
      'every denial points at 12:06:01, when the attempt of 12:05:01 leaves the window.',
    ],
    moments: [
      ...[1, 2, 3, 4, 5].map((s) => ({ at: 5 * MINUTE + s * SECOND, requests: [login] })),
      { at: 5 * MINUTE + 6 * SECOND, requests: times(10, login) },
    ],
  },
  {
    id: 'spoofing',
    title: 'A spoofed X-Forwarded-For does not change the key',
    notes: [
      'The gateway trusts only the load balancer (loopback) and takes the address it appended,',
      'so the attacker stays limited whatever it writes; another client behind the same',
      'load balancer has its own allowance.',
    ],
    moments: [
      { at: 5 * MINUTE + 30 * SECOND, requests: [{ ...login, spoofed: '198.51.100.1' }] },
      {
        at: 5 * MINUTE + 31 * SECOND,
        requests: [
          { ...login, spoofed: '203.0.113.96, 10.0.0.7' },
          { ...login, clientIp: '198.51.100.7' },
        ],
      },
      { at: 6 * MINUTE + SECOND, requests: [login] },
    ],
  },
]
