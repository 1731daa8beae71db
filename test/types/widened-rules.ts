// Compiled, never run: rules declared apart from the call lose their literal types
// (`algorithm: string`); rateLimit and createLimiter refuse them with the fix, and accept each
// way of keeping them literal. The text of the error is checked in test/docs/rule-types.test.ts.
import { createLimiter, defineRules, type RuleConfig, rateLimit } from '@tollgate/express'
import { rateLimit as koaRateLimit } from '@tollgate/koa'

const widened = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
]
// @ts-expect-error algorithm: string: write the array inside defineRules([...]), or `as const`
rateLimit(widened)
// @ts-expect-error the same on Koa
koaRateLimit(widened)
// @ts-expect-error the same through createLimiter's options
createLimiter({ rules: widened })

const asConst = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
] as const
const defined = defineRules([
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
])
const satisfying = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
] satisfies RuleConfig[]
const annotated: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
]
for (const rules of [asConst, defined, satisfying, annotated]) {
  rateLimit(rules)
  koaRateLimit(rules)
  createLimiter({ rules })
}
rateLimit(createLimiter({ rules: asConst }))
