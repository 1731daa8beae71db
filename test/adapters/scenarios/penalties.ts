// Penalties that remember, and allow and deny lists decided before the store
// (docs/concepts/penalties-and-operators.md).
import { accessLists, type RuleConfig } from '@tollgate/express'
import { denied, forwardedFor, ok, perIp, type Scenario } from './support.js'

/** Two logins per 10 s; a denial blocks a minute, doubled per offence up to 4 minutes. */
const LOGIN: RuleConfig = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 2,
  window: '10s',
  penalty: { block: '1m', factor: 2, maxBlock: '4m', forgetAfter: '1h', forbidAfter: 3 },
}

/** A blocked client's answer: 429, Retry-After and `t` at the block's end, nothing left. */
const blocked = (seconds: number): ReturnType<typeof denied> =>
  denied(seconds, ['login'], { ratelimit: `"login";r=0;t=${seconds}` })

const noFields = {
  'x-ratelimit-remaining': undefined,
  ratelimit: undefined,
  'retry-after': undefined,
}

export const PENALTIES_SCENARIOS: readonly Scenario[] = [
  {
    name: 'a penalty blocks a client after a denial, for longer at each offence, then answers 403',
    rules: [LOGIN],
    steps: [
      { times: 2, expect: (i) => ok(1 - i) },
      // First offence: blocked for a minute, though the window ends in 10 s.
      { expect: blocked(60) },
      // Refused without charging while blocked, with the exact time left.
      { advance: 30_000, expect: blocked(30) },
      { advance: 29_000, expect: blocked(1) },
      // The block is over: a fresh window.
      { advance: 1000, times: 2, expect: (i) => ok(1 - i) },
      // Second offence: two minutes.
      { expect: blocked(120) },
      { advance: 120_000, times: 2, expect: (i) => ok(1 - i) },
      // Third: 4 minutes (the cap), and forbidAfter: 3 answers 403 until the block ends.
      {
        expect: {
          status: 403,
          headers: {
            'retry-after': '240',
            'content-type': 'application/problem+json',
            'x-ratelimit-remaining': '0',
            ratelimit: '"login";r=0;t=240',
          },
          body: {
            status: 403,
            code: 'penalty-forbidden',
            'violated-policies': ['login'],
            retryAfter: 240,
          },
        },
      },
      { advance: 239_000, expect: { status: 403, headers: { 'retry-after': '1' } } },
      { advance: 1000, expect: ok(1) },
    ],
  },
  {
    name: 'allow and deny lists decide before the store: no charge and no fields, or a 403',
    // No rule keys on the API key: the deny list alone has it read.
    rules: [perIp(1, 1)],
    options: {
      trustProxy: 'loopback',
      lists: accessLists({
        allow: { ip: ['203.0.113.0/24', '2001:db8::/32'] },
        deny: { ip: '198.51.100.0/24', api_key: 'k_revoked' },
      }),
    },
    steps: [
      {
        headers: forwardedFor('203.0.113.5'),
        times: 3,
        expect: { status: 200, headers: noFields, body: 'ok' },
      },
      {
        headers: forwardedFor('2001:db8::7'),
        times: 2,
        expect: { status: 200, headers: noFields, body: 'ok' },
      },
      {
        headers: forwardedFor('198.51.100.7'),
        expect: {
          status: 403,
          headers: { ...noFields, 'content-type': 'application/problem+json' },
          body: { status: 403, code: 'deny-listed', title: 'Forbidden' },
        },
      },
      // Denied by key even from an allowed address: the deny list wins.
      {
        headers: { ...forwardedFor('203.0.113.5'), 'x-api-key': 'k_revoked' },
        expect: { status: 403, headers: noFields, body: { code: 'deny-listed' } },
      },
      // Anyone else is limited as usual.
      { headers: forwardedFor('192.0.2.1'), expect: ok(0) },
      { headers: forwardedFor('192.0.2.1'), expect: denied(1, ['per-ip']) },
    ],
  },
]
