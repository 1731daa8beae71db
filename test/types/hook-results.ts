// Compiled, never run: hooks whose result is ignored accept any result, so the guides' own
// samples pass strict tsc. `pnpm typecheck` compiles this file against Express 5's types
// (tsconfig.json) and Express 4's (types/tsconfig.express4.json).
import { rateLimit as expressRateLimit, type RuleConfig } from '@tollgate/express'
import { rateLimit as koaRateLimit } from '@tollgate/koa'

const rules: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
]

// docs/adapters/express.md: `res.json` returns the response, which the hook's caller ignores.
expressRateLimit(rules, {
  onLimited: (_req, res, _next, denial) =>
    res.status(denial.status).json({ error: 'slow down', retryAfter: denial.problem.retryAfter }),
  onShadowDenied: (verdict) => verdict.shadowDenied.length,
})

// Koa: an assignment as the arrow's body is a value too.
koaRateLimit(rules, {
  onLimited: (ctx, denial) => (ctx.body = { error: 'slow down', status: denial.status }),
  onShadowDenied: async (verdict) => verdict.decisions.length,
})
