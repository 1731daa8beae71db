import { RateLimitError } from '../errors.js'
import { invalidOption, shown } from '../options/option-values.js'

/**
 * The tokens one call to an LLM API used, as its answer reports them, in one shape whichever
 * API answered. Every figure is a whole number ≥ 0.
 */
export type TokenUsage = {
  /**
   * Tokens of the prompt the model read, those read from or written to the prompt cache
   * included: OpenAI's `prompt_tokens` or `input_tokens`; Anthropic's `input_tokens` plus its
   * `cache_creation_input_tokens` and `cache_read_input_tokens`, which it counts apart.
   */
  readonly inputTokens: number
  /** Tokens the model wrote (reasoning included): `completion_tokens` or `output_tokens`. */
  readonly outputTokens: number
  /** `total_tokens` when the API reports it (OpenAI), else input plus output. */
  readonly totalTokens: number
  /**
   * Of `inputTokens`, those read from the prompt cache: Anthropic's `cache_read_input_tokens`,
   * OpenAI's `prompt_tokens_details.cached_tokens` or `input_tokens_details.cached_tokens`; 0
   * when not reported.
   */
  readonly cacheReadTokens: number
  /** Of `inputTokens`, those written to the prompt cache (Anthropic); 0 when not reported. */
  readonly cacheWriteTokens: number
}

/**
 * What a call costs, in tokens, from its usage: `'total'`, `'input'`, `'output'`, or a function
 * of the usage, for a limit that counts otherwise (an input limit that leaves cache reads out:
 * `(u) => u.inputTokens - u.cacheReadTokens`; output weighed as four inputs:
 * `(u) => u.inputTokens + 4 * u.outputTokens`). A function's fractions are rounded up.
 */
export type UsageMeasure = 'total' | 'input' | 'output' | ((usage: TokenUsage) => number)

/** The usage figures as the APIs name them, merged from every place that reported one. */
export type RawUsage = {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
  input_tokens?: number
  output_tokens?: number
  cache_creation_input_tokens?: number
  cache_read_input_tokens?: number
  cached_tokens?: number
}

const FIGURES = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'input_tokens',
  'output_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
] as const

/** A JSON object, as far as the readers look into it: the keys they read, each of any value. */
type Json = {
  readonly [K in
    | (typeof FIGURES)[number]
    | 'usage'
    | 'message'
    | 'response'
    | 'prompt_tokens_details'
    | 'input_tokens_details'
    | 'cached_tokens']?: unknown
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A whole number ≥ 0; anything else (a string, -1, 1.5, null) is no figure. */
function count(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined
}

/**
 * The `usage` object of a parsed answer or streamed event: at the top (OpenAI's chat
 * completions, its chunks and its responses; Anthropic's messages and `message_delta`), in
 * `message` (Anthropic's `message_start`) or in `response` (the Responses API's
 * `response.completed` event).
 */
export function usageObjectOf(json: unknown): Json | undefined {
  if (!isObject(json)) return undefined
  if (isObject(json.usage)) return json.usage
  if (isObject(json.message) && isObject(json.message.usage)) return json.message.usage
  if (isObject(json.response) && isObject(json.response.usage)) return json.response.usage
  return undefined
}

/**
 * Sets in `into` every figure `usage` reports, over any reported before: a later event's
 * figures are cumulative (Anthropic's `message_delta` carries the output so far) and win.
 */
export function mergeUsage(into: RawUsage, usage: Json): void {
  for (const name of FIGURES) {
    const value = count(usage[name])
    if (value !== undefined) into[name] = value
  }
  for (const details of [usage.prompt_tokens_details, usage.input_tokens_details]) {
    const cached = isObject(details) ? count(details.cached_tokens) : undefined
    if (cached !== undefined) into.cached_tokens = cached
  }
}

const sum = (...values: number[]) =>
  Math.min(
    Number.MAX_SAFE_INTEGER,
    values.reduce((a, b) => a + b, 0),
  )

/** The one shape of what the figures say; undefined when they say nothing of tokens. */
export function normalise(raw: RawUsage): TokenUsage | undefined {
  // Anthropic's input_tokens leaves out the tokens of the cache, which OpenAI's includes; only
  // Anthropic sends the cache figures, so adding them gives the same meaning to both.
  const input =
    raw.prompt_tokens ??
    (raw.input_tokens === undefined
      ? undefined
      : sum(
          raw.input_tokens,
          raw.cache_creation_input_tokens ?? 0,
          raw.cache_read_input_tokens ?? 0,
        ))
  const output = raw.completion_tokens ?? raw.output_tokens
  if (input === undefined && output === undefined && raw.total_tokens === undefined) {
    return undefined
  }
  return {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    totalTokens: raw.total_tokens ?? sum(input ?? 0, output ?? 0),
    cacheReadTokens: raw.cache_read_input_tokens ?? raw.cached_tokens ?? 0,
    cacheWriteTokens: raw.cache_creation_input_tokens ?? 0,
  }
}

/**
 * The usage a JSON answer reports: OpenAI's chat completions (`usage.prompt_tokens`,
 * `completion_tokens`, `total_tokens`) and Responses API (`usage.input_tokens`,
 * `output_tokens`, `total_tokens`), Anthropic's messages (`usage.input_tokens`,
 * `output_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`). `body` is the
 * parsed answer or its text. Undefined when it reports none; never throws.
 * @example
 * const usage = readUsage(await response.clone().json())
 */
export function readUsage(body: unknown): TokenUsage | undefined {
  let json = body
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body)
    } catch {
      return undefined
    }
  }
  const usage = usageObjectOf(json)
  if (usage === undefined) return undefined
  const raw: RawUsage = {}
  mergeUsage(raw, usage)
  return normalise(raw)
}

/**
 * The tokens `usage` costs by `measure` (see `UsageMeasure`), a whole number ≥ 0. A measure
 * function that returns anything else is a mistake in it: `ERR_RL_INVALID_COST`.
 */
export function measureUsage(usage: TokenUsage, measure: UsageMeasure = 'total'): number {
  switch (measure) {
    case 'total':
      return usage.totalTokens
    case 'input':
      return usage.inputTokens
    case 'output':
      return usage.outputTokens
  }
  if (typeof measure !== 'function') throw invalidMeasure(measure)
  const cost = measure(usage)
  if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) {
    return Math.min(Number.MAX_SAFE_INTEGER, Math.ceil(cost))
  }
  throw new RateLimitError(
    'ERR_RL_INVALID_COST',
    `usage measure: expected a number of tokens ≥ 0, got ${shown(cost)}`,
    { field: 'measure' },
  )
}

/** The refusal of a measure that is none of the three names and no function. */
export function invalidMeasure(measure: unknown): RateLimitError {
  return invalidOption(
    'measure',
    `expected 'total', 'input', 'output' or a function of the usage, got ${shown(measure)}`,
  )
}
