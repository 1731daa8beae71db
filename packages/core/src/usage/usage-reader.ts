import { checkWhole } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { invalidMeasure, measureUsage, readUsage, type UsageMeasure } from './read-usage.js'
import { DEFAULT_MAX_EVENT_LENGTH, type SseUsageOptions, sseUsage } from './sse-usage.js'

/** Options of `usageReader`: which tokens count, and how much of one streamed event it holds. */
export type UsageReaderOptions = SseUsageOptions & {
  /**
   * Which tokens a call costs: `'total'`, `'input'`, `'output'`, or a function of its
   * `TokenUsage`. Change it to settle against a limit that counts only some tokens (Anthropic's
   * input and output limits) or weighs them (a budget in money).
   * @default 'total'
   */
  readonly measure?: UsageMeasure | undefined
}

/** Reads what a call cost, in tokens by one measure, from its JSON or streamed answer. */
export type UsageReader = {
  /**
   * The tokens a JSON answer (parsed, or its text) reports, by the measure; undefined when it
   * reports no usage.
   */
  readonly json: (body: unknown) => number | undefined
  /**
   * A reader for one streamed answer: `write` its chunks as they arrive, and `end()` gives its
   * tokens by the measure (undefined when it reported no usage). See `sseUsage`.
   */
  readonly stream: () => {
    /** Reads the next chunk of the body, text or bytes. */
    readonly write: (chunk: string | ArrayBufferView | ArrayBuffer) => void
    /**
     * The answer's tokens by the measure, once the body ended; undefined when it reported no usage.
     */
    readonly end: () => number | undefined
    /**
     * Events skipped as longer than `maxEventLength`: more than 0 means the usage may be missing.
     */
    readonly skippedEvents: () => number
  }
}

/**
 * The usage readers with their measure and bound fixed once, for a gateway or an adapter that
 * settles every call the same way. Options are checked here, not per call.
 * @example
 * const cost = usageReader({ measure: 'total' })
 * const tokens = cost.json(await response.clone().json()) // 1234 | undefined
 */
export function usageReader(options: UsageReaderOptions = {}): UsageReader {
  refuseUnknownOptions(options, ['measure', 'maxEventLength'], 'usageReader()')
  const measure = options.measure ?? 'total'
  if (typeof measure !== 'function' && !['total', 'input', 'output'].includes(measure)) {
    throw invalidMeasure(measure)
  }
  const maxEventLength = checkWhole(
    'maxEventLength',
    options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH,
    { min: 1 },
    'usageReader()',
  )
  const cost = (usage: ReturnType<typeof readUsage>) =>
    usage === undefined ? undefined : measureUsage(usage, measure)
  return {
    json: (body) => cost(readUsage(body)),
    stream() {
      const reader = sseUsage({ maxEventLength })
      return {
        write: reader.write,
        end: () => cost(reader.end()),
        skippedEvents: reader.skippedEvents,
      }
    },
  }
}
