import { closest } from '../closest-name.js'
import type { Limiter } from '../limiter/types.js'
import { checkFunction, checkWhole, invalidOption, shown } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import type { WarnOnce } from '../warnings.js'
import type { Exchange } from './exchange.js'
import {
  createMeter,
  type MeterPlan,
  type ResponseMeter,
  type SettleResponse,
  type SettleSource,
  type SettlingLimiter,
} from './response-meter.js'

/**
 * The most of a body held to read its cost (a JSON answer's usage, the text a function reads):
 * 1 MiB. An LLM's JSON answer is a few kilobytes.
 */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576

/**
 * Options of `settleFrom`: how much of a body it holds to read a cost, and when an exchange is
 * cancelled instead of settled.
 */
export type SettleFromOptions = {
  /**
   * The most of a body held to read its cost: a JSON answer's usage, or `text` for a function.
   * A larger body is not held past the bound (what was held is dropped): its usage is not read,
   * its estimate stands, and `WARN_SETTLE_NO_COST` says so. A stream of events is read as it
   * goes and held only an event at a time (the usage reader's `maxEventLength`). Raise it for
   * longer JSON answers; 0 holds nothing.
   * @default 1_048_576
   */
  readonly maxBodyBytes?: number | undefined
  /**
   * Whether a response from which no cost could be read gives its reservation back (`cancel`)
   * rather than count as its estimate.
   * @default an error status: `(response) => response.status >= 400`, since an LLM API that
   * answers an error reports no usage and bills no tokens
   */
  readonly cancelIf?: ((response: SettleResponse) => boolean) | undefined
}

/**
 * The `settle` option of a middleware, as `settleFrom` made it. The kit binds it to its limiter
 * once, at start-up, where the rules it names are checked.
 */
export type ResponseSettler = {
  /**
   * Called by the adapter kit, once: checks the rules named against the limiter and returns the
   * meter for each exchange. Not for application code.
   */
  readonly bind: (limiter: Limiter, warn: WarnOnce) => MeterFor
}

/** A meter for an admitted exchange; undefined for a denial. */
export type MeterFor = (
  exchange: Pick<Exchange<unknown, unknown>, 'denial' | 'verdict'>,
) => ResponseMeter | undefined

/**
 * Settles each admitted request from its response, for a middleware's `settle` option: the
 * reservation made against the estimate (the rule's `cost`, or the `estimate` option) is
 * replaced with what the response says it cost, once it has been sent whole, and given back
 * when the client goes away first. `from` is where the cost is read, for every rule with
 * `settle`, or by rule id:
 * - a usage reader (`usageReader()`): the tokens an OpenAI- or Anthropic-style answer reports,
 *   in a JSON body or at the end of a `text/event-stream` body (read as it streams);
 * - a function of the response (`SettleResponse`: status, fields, size, text), returning a cost,
 *   costs by rule id, or undefined.
 * A response whose cost cannot be read leaves the estimate (reported once,
 * `WARN_SETTLE_NO_COST` or `WARN_SETTLE_READ_FAILED`), or is cancelled when `cancelIf` says so;
 * it is never turned into an error.
 * @example
 * app.use(rateLimit(rules, { estimate: (req) => req.body.max_tokens, settle: settleFrom(usageReader()) }))
 * @example settleFrom({ tokens: usageReader(), bytes: (response) => response.bytes })
 */
export function settleFrom(
  from: SettleSource | Readonly<Record<string, SettleSource>>,
  options: SettleFromOptions = {},
): ResponseSettler {
  refuseUnknownOptions(options, ['maxBodyBytes', 'cancelIf'], 'settleFrom()')
  const maxBodyBytes = checkWhole(
    'maxBodyBytes',
    options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    { min: 0, unit: 'bytes' },
    'settleFrom()',
  )
  const cancelIf = options.cancelIf ?? failed
  checkFunction('cancelIf', cancelIf, 'settleFrom()')
  const plan: MeterPlan = { sources: sourcesOf(from), maxBodyBytes, cancelIf }
  return {
    bind(limiter, warn) {
      const settling = checkRules(plan, limiter)
      return ({ denial, verdict }) =>
        denial === undefined && verdict?.allowed === true
          ? createMeter(plan, settling, verdict, warn)
          : undefined
    },
  }
}

const failed = (response: SettleResponse) => response.status >= 400

function isSource(value: unknown): value is SettleSource {
  if (typeof value === 'function') return true
  const reader = value as { json?: unknown; stream?: unknown } | null
  return (
    typeof reader === 'object' &&
    reader !== null &&
    typeof reader.json === 'function' &&
    typeof reader.stream === 'function'
  )
}

const EXPECTED = 'expected usageReader(), a function of the response, or either by rule id'

function sourcesOf(from: unknown): MeterPlan['sources'] {
  if (isSource(from)) return [{ rule: undefined, from }]
  if (typeof from !== 'object' || from === null || Array.isArray(from)) {
    throw invalidOption('settle', `${EXPECTED}, got ${shown(from)}`, 'settleFrom()')
  }
  const sources = Object.entries(from).filter(([, source]) => source !== undefined)
  if (sources.length === 0) throw invalidOption('settle', `${EXPECTED}, got {}`, 'settleFrom()')
  return sources.map(([rule, source]) => {
    if (!isSource(source)) {
      throw invalidOption(
        `settle.${rule}`,
        `expected usageReader() or a function of the response, got ${shown(source)}`,
        'settleFrom()',
      )
    }
    return { rule, from: source }
  })
}

/**
 * The limiter, checked against the plan at start-up: it settles, and every rule named exists
 * and has `settle` (a misspelt id is answered with the closest).
 */
function checkRules(plan: MeterPlan, limiter: Limiter): SettlingLimiter {
  const settling = limiter.rules.filter((rule) => rule.settle !== undefined).map((rule) => rule.id)
  if (settling.length === 0) {
    throw invalidOption(
      'settle',
      'no rule has a settle field, so nothing is reserved to settle: add settle: true to the rules charged by the response',
    )
  }
  if (typeof limiter.settle !== 'function' || typeof limiter.cancel !== 'function') {
    throw invalidOption('settle', 'the limiter given has no settle and cancel methods')
  }
  for (const { rule } of plan.sources) {
    if (rule === undefined || settling.includes(rule)) continue
    const ids = limiter.rules.map((known) => known.id)
    if (ids.includes(rule)) {
      throw invalidOption(
        `settle.${rule}`,
        `rule "${rule}" has no settle field, so its charge is final: add settle: true to it (rules with settle: ${settling.join(', ')})`,
      )
    }
    const guess = closest(rule, ids)
    const hint = guess === undefined ? `rules: ${ids.join(', ')}` : `did you mean "${guess}"?`
    throw invalidOption(`settle.${rule}`, `no rule "${rule}": ${hint}`)
  }
  return limiter as SettlingLimiter
}
