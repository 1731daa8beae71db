import { RateLimitError } from '@tollgate/core'

/**
 * The tokens a call is expected to spend, for the token policies an LLM API announces: a total,
 * or the input (the prompt) and the output (up to the call's `max_tokens`) apart. A total is
 * charged in full against each token policy, an input-only or output-only one included, which
 * overcounts such a policy: give both parts to charge each its own.
 */
export type TokenEstimate = number | { readonly input: number; readonly output: number }

/** What one call spends, in each unit a learned policy may count. */
export type Spend = {
  readonly requests: number
  readonly tokens: number
  readonly inputTokens: number
  readonly outputTokens: number
}

export const NOTHING: Spend = { requests: 0, tokens: 0, inputTokens: 0, outputTokens: 0 }

/**
 * Without an estimate a call counts as one token: any call to an LLM API spends at least one,
 * so an exhausted token policy still holds it back, and a policy with tokens left does not.
 */
const ONE_TOKEN: TokenEstimate = 1

function tokens(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.ceil(value)
  throw new RateLimitError(
    'ERR_RL_INVALID_COST',
    `createClient() tokens: expected ${what} to be a number of tokens ≥ 0, got ${String(value)}`,
    { field: 'tokens' },
  )
}

/**
 * A call's spend: `requests` (the `cost` option) against request policies, and its token
 * estimate, rounded up to whole tokens, against token policies.
 */
export function spendOf(requests: number, estimate: TokenEstimate | undefined): Spend {
  const given = estimate ?? ONE_TOKEN
  if (typeof given === 'object' && given !== null) {
    const input = tokens(given.input, '`input`')
    const output = tokens(given.output, '`output`')
    return { requests, tokens: input + output, inputTokens: input, outputTokens: output }
  }
  const total = tokens(given, 'the estimate')
  return { requests, tokens: total, inputTokens: total, outputTokens: total }
}

/** What `spend` costs a policy counting `unit`; a policy of any other unit counts requests. */
export function costIn(unit: string | undefined, spend: Spend): number {
  switch (unit) {
    case 'tokens':
      return spend.tokens
    case 'input-tokens':
      return spend.inputTokens
    case 'output-tokens':
      return spend.outputTokens
    default:
      return spend.requests
  }
}

export function addSpend(a: Spend, b: Spend, sign: 1 | -1 = 1): Spend {
  return {
    requests: a.requests + sign * b.requests,
    tokens: a.tokens + sign * b.tokens,
    inputTokens: a.inputTokens + sign * b.inputTokens,
    outputTokens: a.outputTokens + sign * b.outputTokens,
  }
}
