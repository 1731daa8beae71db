import type { MaybePromise, SettleResult } from '../limiter/types.js'
import type { WarnOnce } from '../warnings.js'
import type { BodyText } from './body-text.js'
import type { CostOfResponse, MeterPlan, SettleResponse, StreamReader } from './response-meter.js'

// What a finished response cost, read by the sources of `settleFrom`, and the settle or cancel
// it leads to; every failure is reported once and leaves the estimate, never thrown.

/** The costs the sources read: a number or costs by rule; undefined when none could. */
export function readCosts(
  plan: MeterPlan,
  response: SettleResponse,
  streams: Array<StreamReader | undefined> | undefined,
  warn: WarnOnce,
): number | Readonly<Record<string, number>> | undefined {
  let costs: number | Readonly<Record<string, number>> | undefined
  let byRule: Record<string, number> | undefined
  plan.sources.forEach(({ rule, from }, i) => {
    let cost: ReturnType<CostOfResponse>
    try {
      const stream = streams?.[i]
      if (typeof from === 'function') cost = from(response)
      else if (stream !== undefined) cost = stream.end()
      else cost = response.text === undefined ? undefined : from.json(response.text)
    } catch (error) {
      const where = rule === undefined ? '' : ` for rule "${rule}"`
      warn(
        'WARN_SETTLE_READ_FAILED',
        `settle: reading a response's cost${where} threw (${messageOf(error)}): its estimate stands`,
      )
      return
    }
    if (cost === undefined) return
    if (rule === undefined) costs = cost
    else {
      byRule ??= {}
      byRule[rule] = cost as number
    }
  })
  return byRule ?? costs
}

/** `cancelIf`, a throw read as no (the estimate stands, as for any failure to read). */
export function cancels(plan: MeterPlan, response: SettleResponse, warn: WarnOnce): boolean {
  try {
    return plan.cancelIf(response) === true
  } catch (error) {
    warn('WARN_SETTLE_READ_FAILED', `settle: cancelIf threw (${messageOf(error)})`)
    return false
  }
}

/**
 * Runs a settle or cancel: a cost the limiter refuses (not a whole number, an unknown rule) is
 * reported and leaves the estimate; a store failure the limiter has reported already.
 */
export function pending(
  call: () => MaybePromise<SettleResult>,
  warn: WarnOnce,
): Promise<void> | undefined {
  try {
    const done = call()
    if (typeof (done as { then?: unknown }).then !== 'function') return undefined
    return (done as Promise<SettleResult>).then(
      () => undefined,
      () => undefined,
    )
  } catch (error) {
    warn(
      'WARN_SETTLE_READ_FAILED',
      `settle: the cost read was refused (${messageOf(error)}): its estimate stands`,
    )
    return undefined
  }
}

export function whyNoCost(
  plan: MeterPlan,
  text: BodyText | undefined,
  streams: Array<StreamReader | undefined> | undefined,
): string {
  if (text?.cut() === true) return `its body was larger than maxBodyBytes, ${plan.maxBodyBytes}`
  const skipped = streams?.reduce((sum, stream) => sum + (stream?.skippedEvents() ?? 0), 0) ?? 0
  if (skipped > 0)
    return `${skipped} event(s) larger than the reader's maxEventLength were passed over`
  return 'none found; an OpenAI stream reports usage only with stream_options: { include_usage: true }'
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
