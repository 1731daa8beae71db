import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { measureUsage, readUsage, type TokenUsage } from './read-usage.js'
import { usageReader } from './usage-reader.js'

describe('readUsage: the usage of a JSON answer', () => {
  it('OpenAI chat completions: prompt, completion and total, cached tokens among the prompt', () => {
    const body = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' } }],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 300,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 1024 },
        completion_tokens_details: { reasoning_tokens: 100 },
      },
    }
    expect(readUsage(body)).toEqual({
      inputTokens: 1200,
      outputTokens: 300,
      totalTokens: 1500,
      cacheReadTokens: 1024,
      cacheWriteTokens: 0,
    })
    expect(readUsage(JSON.stringify(body))).toEqual(readUsage(body))
  })

  it('OpenAI Responses API: input, output and total', () => {
    const body = {
      object: 'response',
      output: [],
      usage: {
        input_tokens: 36,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 87,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 123,
      },
    }
    expect(readUsage(body)).toEqual({
      inputTokens: 36,
      outputTokens: 87,
      totalTokens: 123,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    })
  })

  it('Anthropic messages: the cache tokens, counted apart, are added to the input', () => {
    const body = {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hi' }],
      usage: {
        input_tokens: 50,
        cache_creation_input_tokens: 2000,
        cache_read_input_tokens: 10_000,
        output_tokens: 400,
      },
    }
    expect(readUsage(body)).toEqual({
      inputTokens: 12_050,
      outputTokens: 400,
      totalTokens: 12_450,
      cacheReadTokens: 10_000,
      cacheWriteTokens: 2000,
    })
  })

  it('OpenAI embeddings: prompt and total only', () => {
    expect(readUsage({ usage: { prompt_tokens: 8, total_tokens: 8 } })).toEqual({
      inputTokens: 8,
      outputTokens: 0,
      totalTokens: 8,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    })
  })

  it.each([
    undefined,
    null,
    42,
    'not json',
    '{"usage":',
    [],
    {},
    { usage: null },
    { usage: [] },
    { usage: {} },
    { usage: { prompt_tokens: -1, completion_tokens: 1.5, total_tokens: '3' } },
    { usage: { input_tokens: Number.NaN } },
  ])('%j reports no usage', (body) => {
    expect(readUsage(body)).toBeUndefined()
  })

  it('never throws, and any usage it gives is whole numbers ≥ 0', () => {
    const figure = fc.oneof(
      fc.integer({ min: -5, max: 1e6 }),
      fc.double(),
      fc.constant(Number.MAX_SAFE_INTEGER),
      fc.string(),
      fc.constant(null),
    )
    const usage = fc.dictionary(
      fc.constantFrom(
        'prompt_tokens',
        'completion_tokens',
        'total_tokens',
        'input_tokens',
        'output_tokens',
        'cache_creation_input_tokens',
        'cache_read_input_tokens',
      ),
      figure,
    )
    const body = fc.oneof(
      fc.anything(),
      usage.map((u) => ({ usage: u })),
      usage.map((u) => JSON.stringify({ message: { usage: u } })),
      fc.string(),
    )
    fc.assert(
      fc.property(body, (b) => {
        const read = readUsage(b)
        if (read === undefined) return
        for (const value of Object.values(read)) {
          expect(Number.isSafeInteger(value) && value >= 0, String(value)).toBe(true)
        }
      }),
      { numRuns: 3000 },
    )
  })
})

describe('measures', () => {
  const usage: TokenUsage = {
    inputTokens: 1000,
    outputTokens: 200,
    totalTokens: 1200,
    cacheReadTokens: 800,
    cacheWriteTokens: 0,
  }

  it.each([
    ['total', 1200],
    ['input', 1000],
    ['output', 200],
  ] as const)('%s is %i tokens', (measure, tokens) => {
    expect(measureUsage(usage, measure)).toBe(tokens)
  })

  it('a function: its fractions rounded up', () => {
    expect(measureUsage(usage, (u) => u.inputTokens - u.cacheReadTokens)).toBe(200)
    expect(measureUsage(usage, (u) => u.cacheReadTokens / 3)).toBe(267)
  })

  it('a function that gives no number of tokens is a mistake, named', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '3']) {
      expect(() => measureUsage(usage, () => bad as number)).toThrow(
        expect.objectContaining({ code: 'ERR_RL_INVALID_COST' }),
      )
    }
  })

  it('usageReader checks its options once, and measures a JSON answer', () => {
    const reader = usageReader({ measure: 'output' })
    expect(reader.json({ usage: { input_tokens: 5, output_tokens: 7 } })).toBe(7)
    expect(reader.json('{}')).toBeUndefined()
    expect(() => usageReader({ measure: 'totl' as 'total' })).toThrow(
      /measure: expected 'total', 'input', 'output' or a function of the usage, got "totl"/,
    )
    expect(() => usageReader({ maxEventLength: 0 })).toThrow(/maxEventLength/)
    expect(() => usageReader({ mesure: 'total' } as never)).toThrow(/unknown option "mesure"/)
  })
})
