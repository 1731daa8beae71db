import { type RuleConfig, settleFrom, usageReader } from '@tollgate/express'
import { ok, type Scenario } from './support.js'

// Settling from the response (docs/concepts/charging-after-the-response.md): each admitted
// request reserves its estimate (the rule's cost, 100, or `x-test-estimate`), the fields report
// what remains after that reservation, and the response's cost replaces it once it was sent;
// the next request's fields show the settled state.

const TOKENS: RuleConfig = {
  id: 'tokens',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 1000,
  window: '1m',
  cost: 100,
  settle: true,
}

const left = (remaining: number, status = 200) => ({
  status,
  headers: { 'x-ratelimit-remaining': String(remaining) },
})

export const SETTLE_SCENARIOS: readonly Scenario[] = [
  {
    name: 'settle: the usage a JSON answer reports replaces the estimate',
    rules: [TOKENS],
    settle: settleFrom(usageReader()),
    estimate: true,
    warnings: ['WARN_SETTLE_NO_COST'],
    steps: [
      // 400 reserved: 600 left; the answer used 30.
      {
        method: 'POST',
        path: '/llm/json/30',
        headers: { 'x-test-estimate': '400' },
        expect: left(600),
      },
      // 30 used, 100 reserved (the rule's cost); the answer used 50.
      { path: '/llm/json/50', expect: left(870) },
      // 80 used, 100 reserved; no usage reported: the estimate stands (warned once).
      { path: '/', expect: ok(820) },
      // 180 used, 100 reserved; a 503 without usage gives it back.
      { path: '/llm/fail', expect: left(720, 503) },
      { path: '/llm/json/10', expect: left(720) },
      // An estimate above the rule's capacity could never pass: a 400, not a 429.
      { path: '/llm/json/1', headers: { 'x-test-estimate': '5000' }, expect: { status: 400 } },
    ],
  },
  {
    name: 'settle: the usage at the end of a streamed answer, its bytes cut within characters',
    rules: [TOKENS],
    settle: settleFrom(usageReader()),
    estimate: true,
    steps: [
      {
        path: '/llm/sse/40',
        headers: { 'x-test-estimate': '300', 'x-test-split': '1,7,40,41,42,43,44,100,101,150,151' },
        expect: left(700),
      },
      { path: '/', headers: { 'x-test-estimate': '0' }, expect: ok(960) },
    ],
  },
  {
    name: 'settle: a function of the response (its size), as costs by rule',
    rules: [TOKENS],
    settle: settleFrom((response) =>
      response.status === 200 ? { tokens: response.bytes } : undefined,
    ),
    steps: [
      { path: '/', expect: ok(900) },
      // "ok" cost 2.
      { path: '/', expect: ok(898) },
      { path: '/', expect: ok(896) },
    ],
  },
  {
    name: 'settle: a reader that throws leaves the estimate and the answer as it was',
    rules: [TOKENS],
    settle: settleFrom(() => {
      throw new Error('the reader broke')
    }),
    warnings: ['WARN_SETTLE_READ_FAILED'],
    steps: [
      { path: '/', expect: ok(900) },
      { path: '/llm/json/10', expect: left(800) },
      { path: '/', expect: ok(700) },
    ],
  },
]
