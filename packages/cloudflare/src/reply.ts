import { type Decision, RateLimitError, type RateLimitErrorCode } from '@tollgate/core/store'
import type { ObjectReply } from './wire.js'

/** What an object answered, checked: `count` decisions and a time, or its error thrown. */
export function readReply(body: unknown, count: number): { decisions: Decision[]; at: number } {
  const reply = body as { decisions?: unknown; at?: unknown; error?: unknown } | null
  if (typeof reply === 'object' && reply !== null && reply.error !== undefined) {
    const { code, message, rule, field } = (reply as Extract<ObjectReply, { error: unknown }>).error
    throw new RateLimitError(code as RateLimitErrorCode, String(message), {
      ...(rule === undefined || rule === null ? {} : { rule }),
      ...(field === undefined || field === null ? {} : { field }),
    })
  }
  const decisions = reply?.decisions
  const at = reply?.at
  if (!Array.isArray(decisions) || decisions.length !== count || !Number.isSafeInteger(at)) {
    throw badReply(body)
  }
  return { decisions: decisions.map((d) => decisionOf(d, body)), at: at as number }
}

/** A decision rebuilt field by field: JSON drops an undefined `retryAfterMs`. */
function decisionOf(value: unknown, body: unknown): Decision {
  const d = value as Partial<Record<keyof Decision, unknown>> | null
  const whole = (v: unknown) => typeof v === 'number' && Number.isFinite(v)
  const optional = (v: unknown) => v === undefined || v === null || whole(v)
  if (
    typeof d !== 'object' ||
    d === null ||
    typeof d.allowed !== 'boolean' ||
    !whole(d.remaining) ||
    !whole(d.limit) ||
    !whole(d.resetAfterMs) ||
    !optional(d.retryAfterMs) ||
    !optional(d.delayMs)
  ) {
    throw badReply(body)
  }
  const decision: Decision = {
    allowed: d.allowed,
    remaining: d.remaining as number,
    limit: d.limit as number,
    resetAfterMs: d.resetAfterMs as number,
    retryAfterMs: (d.retryAfterMs ?? undefined) as number | undefined,
  }
  return typeof d.delayMs === 'number' ? { ...decision, delayMs: d.delayMs } : decision
}

function badReply(body: unknown): RateLimitError {
  const text = JSON.stringify(body) ?? String(body)
  return new RateLimitError(
    'ERR_RL_STORE_REPLY',
    `durableObjectStore(): the limiter object answered ${text.slice(0, 200)}, not decisions; is the namespace bound to TollgateLimiter?`,
  )
}
