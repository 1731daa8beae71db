import { readCurrentForm, readSingleValuedDrafts } from './ietf-fields.js'
import { readXRateLimit } from './legacy-fields.js'
import { readAnthropicFields, readOpenAiFields } from './llm-fields.js'
import { parseRetryAfter } from './retry-after.js'
import type { HeaderSource, ReadFields } from './types.js'

function accessor(headers: HeaderSource): (name: string) => string | undefined {
  const get = typeof headers === 'function' ? headers : (name: string) => headers.get(name)
  return (name) => {
    try {
      const value = get(name)
      return typeof value === 'string' ? value : undefined
    } catch {
      return undefined // a lookup that throws reads as an absent field
    }
  }
}

/**
 * Reads every rate-limit field of a response: `Retry-After`, and the policies of the most
 * precise family present: the current form (drafts 8–12), then draft 7, then draft 6, then
 * Anthropic's `anthropic-ratelimit-*`, then OpenAI's `x-ratelimit-*-requests` and
 * `-tokens`, then `X-RateLimit-*`. One family is used, not a mix: a server sending several
 * (Tollgate sends `X-RateLimit-*` beside the current form by default) describes the same quota
 * in each. The two LLM dialects give a policy per unit (`quotaUnit`: `requests`, `tokens`,
 * `input-tokens`, `output-tokens`).
 * Never throws; a malformed field is ignored; every wait is a whole number of ms ≥ 0.
 * `now` (ms since the epoch) places HTTP-dates and epoch resets.
 * @example
 * const { retryAfterMs, policies } = readRateLimitFields(response.headers, Date.now())
 */
export function readRateLimitFields(headers: HeaderSource, now: number): ReadFields {
  const header = accessor(headers)
  const retryAfterMs = parseRetryAfter(header('retry-after'), now)
  const current = readCurrentForm(header('ratelimit-policy'), header('ratelimit'))
  if (current !== undefined) return { retryAfterMs, form: 'current', policies: current }
  const single = readSingleValuedDrafts(header)
  if (single !== undefined) return { retryAfterMs, form: single.form, policies: [single.policy] }
  const anthropic = readAnthropicFields(header, now)
  if (anthropic !== undefined) return { retryAfterMs, form: 'anthropic', policies: anthropic }
  const openAi = readOpenAiFields(header)
  if (openAi !== undefined) return { retryAfterMs, form: 'openai', policies: openAi }
  const legacy = readXRateLimit(header, now)
  if (legacy !== undefined) return { retryAfterMs, form: 'x-ratelimit', policies: [legacy] }
  return { retryAfterMs, form: undefined, policies: [] }
}
