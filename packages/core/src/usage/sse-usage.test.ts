import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { TokenUsage } from './read-usage.js'
import { DEFAULT_MAX_EVENT_LENGTH, sseUsage } from './sse-usage.js'
import { usageReader } from './usage-reader.js'

const event = (data: unknown, type?: string) =>
  `${type === undefined ? '' : `event: ${type}\n`}data: ${JSON.stringify(data)}\n\n`

/** OpenAI chat completions with `stream_options: { include_usage: true }`. */
const OPENAI_CHAT = [
  ...['Bonjour', ' à', ' vous', ' 😀', ' 你好'].map((content) =>
    event({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
      usage: null,
    }),
  ),
  event({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    choices: [],
    usage: {
      prompt_tokens: 19,
      completion_tokens: 10,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  }),
  'data: [DONE]\n\n',
].join('')

/** Anthropic messages: the input at the start, the output so far in each message_delta. */
const ANTHROPIC = [
  event(
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        usage: {
          input_tokens: 25,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 100,
          output_tokens: 1,
        },
      },
    },
    'message_start',
  ),
  event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  'event: ping\ndata: {"type": "ping"}\n\n',
  event(
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Grüße 🌍' } },
    'content_block_delta',
  ),
  event({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
  event(
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } },
    'message_delta',
  ),
  event(
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 15 } },
    'message_delta',
  ),
  event({ type: 'message_stop' }, 'message_stop'),
].join('')

/** OpenAI's Responses API: the usage in `response.completed`. */
const OPENAI_RESPONSES = [
  event(
    { type: 'response.created', response: { id: 'resp_1', status: 'in_progress', usage: null } },
    'response.created',
  ),
  event({ type: 'response.output_text.delta', delta: 'Hé' }, 'response.output_text.delta'),
  event(
    {
      type: 'response.completed',
      response: {
        id: 'resp_1',
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hé' }] }],
        usage: { input_tokens: 37, output_tokens: 11, total_tokens: 48 },
      },
    },
    'response.completed',
  ),
].join('')

/**
 * An event whose JSON spans several data lines (any server may break it so): a line ended
 * twice, by a CR and an LF read as two ends, would split it in two events.
 */
const MULTI_LINE = [
  event({ choices: [{ delta: { content: 'Ça va ?' } }], usage: null }),
  JSON.stringify({ choices: [], usage: { prompt_tokens: 8, completion_tokens: 5 } }, null, 1)
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join(''),
  '\n',
  'data: [DONE]\n\n',
].join('')

const usage = (
  inputTokens: number,
  outputTokens: number,
  totalTokens: number,
  cacheReadTokens = 0,
  cacheWriteTokens = 0,
): TokenUsage => ({ inputTokens, outputTokens, totalTokens, cacheReadTokens, cacheWriteTokens })

const STREAMS: Array<[string, string, TokenUsage]> = [
  ['OpenAI chat completions', OPENAI_CHAT, usage(19, 10, 29)],
  ['Anthropic messages', ANTHROPIC, usage(125, 15, 140, 100)],
  ['OpenAI Responses API', OPENAI_RESPONSES, usage(37, 11, 48)],
  ['an event on several data lines', MULTI_LINE, usage(8, 5, 13)],
]

function readAll(chunks: Iterable<string | Uint8Array>, maxEventLength?: number) {
  const reader = sseUsage({ maxEventLength })
  for (const chunk of chunks) reader.write(chunk)
  return { usage: reader.end(), skipped: reader.skippedEvents() }
}

/** `whole` cut at the given offsets. */
function cut<T extends string | Uint8Array>(whole: T, offsets: number[]): T[] {
  const at = [...new Set(offsets.map((o) => o % (whole.length + 1)))].sort((a, b) => a - b)
  const pieces: T[] = []
  let from = 0
  for (const to of [...at, whole.length]) {
    pieces.push(whole.slice(from, to) as T)
    from = to
  }
  return pieces
}

describe.each(STREAMS)('%s', (_name, stream, expected) => {
  it('gives the usage at the end of the stream', () => {
    expect(readAll([stream]).usage).toEqual(expected)
  })

  it('gives the same usage for any split of its bytes, within a character or a line', () => {
    // A BOM first: three bytes that, decoded apart, would no longer be one to skip.
    const bytes = new TextEncoder().encode(`\uFEFF${stream}`)
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (offsets) => {
        expect(readAll(cut(bytes, offsets))).toEqual({ usage: expected, skipped: 0 })
      }),
      { numRuns: 500 },
    )
  })

  it('gives the same usage for any split of its text, and one byte at a time', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (offsets) => {
        expect(readAll(cut(stream, offsets)).usage).toEqual(expected)
      }),
      { numRuns: 500 },
    )
    const bytes = new TextEncoder().encode(stream)
    expect(readAll(Array.from(bytes, (byte) => Uint8Array.of(byte))).usage).toEqual(expected)
  })

  it('reads lines ended by CRLF or CR as by LF, whatever the split', () => {
    for (const ending of ['\r\n', '\r']) {
      const text = stream.replaceAll('\n', ending)
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 40 }), (offsets) => {
          expect(readAll(cut(text, offsets)).usage).toEqual(expected)
        }),
        { numRuns: 200 },
      )
    }
  })

  it('gives the same usage with a BOM, comments and other fields between events', () => {
    const noisy = `\uFEFF: keep-alive\nretry: 1000\n\n${stream.replaceAll('\n\n', '\n: comment\nid: 7\n\n')}`
    expect(readAll([noisy]).usage).toEqual(expected)
  })

  it('a stream cut before its usage reports none, or what came before the cut', () => {
    const before = stream.slice(0, stream.indexOf('"usage":{'))
    const partial = readAll([before]).usage
    if (partial !== undefined) expect(partial.inputTokens).toBeLessThanOrEqual(expected.inputTokens)
  })
})

describe('the event stream format', () => {
  it('joins data lines with LF, takes "data:" without its space, and skips [DONE]', () => {
    const text =
      'data:{"usage":\ndata: {"prompt_tokens": 3,\ndata:"completion_tokens": 4}}\n\ndata: [DONE]\n\n'
    expect(readAll([text]).usage).toEqual(usage(3, 4, 7))
  })

  it('counts an event the stream ends without its blank line, not a line cut off by the end', () => {
    expect(readAll(['data: {"usage":{"input_tokens":1,"output_tokens":2}}\n']).usage).toEqual(
      usage(1, 2, 3),
    )
    expect(readAll(['data: {"usage":{"input_tokens":1,"output_tokens":2}}']).usage).toBe(undefined)
  })

  it('passes over events that are no JSON or report no usage, and keeps what came before', () => {
    const text = [
      'data: {"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\n',
      'data: {"usage": oops}\n\n',
      'data: {"usage": "none"}\n\n',
      'data: {"usage":{"completion_tokens":-3}}\n\n',
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n',
    ].join('')
    expect(readAll([text]).usage).toEqual(usage(5, 1, 6))
  })

  it('skips a BOM cut anywhere in its three bytes, as one written whole', () => {
    // A BOM left in would make the first line's field `\uFEFFdata`, no data field.
    const bytes = new TextEncoder().encode('\uFEFFdata: {"usage":{"prompt_tokens":1}}\n\n')
    for (let at = 0; at <= 3; at++) {
      expect(readAll([bytes.slice(0, at), bytes.slice(at)]).usage).toEqual(usage(1, 0, 1))
    }
    expect(readAll(Array.from(bytes, (byte) => Uint8Array.of(byte))).usage).toEqual(usage(1, 0, 1))
  })

  it('ignores what is written after end(), and end() gives the same again', () => {
    const reader = sseUsage()
    reader.write(OPENAI_CHAT)
    const first = reader.end()
    reader.write('data: {"usage":{"prompt_tokens":99}}\n\n')
    expect(reader.end()).toBe(first)
  })

  it('reads bytes and text written in turn, a character cut in two by text ending as U+FFFD', () => {
    const reader = sseUsage()
    reader.write(new TextEncoder().encode('data: {"usage":{"prompt_tokens":2,'))
    reader.write('"completion_tokens":3}}\n')
    reader.write(Uint8Array.of(0xe2, 0x82)) // the first two bytes of €
    reader.write('\n')
    expect(reader.end()).toEqual(usage(2, 3, 5))
  })
})

describe('bounded memory', () => {
  const usageEvent = 'data: {"usage":{"input_tokens":4,"output_tokens":6}}\n\n'

  it('holds an event of maxEventLength, and drops one a unit longer, then reads the next', () => {
    const line = (length: number) => {
      const head = 'data: {"usage":{"input_tokens":1,"output_tokens":1},"pad":"'
      return `${head}${'x'.repeat(length - head.length - 2)}"}`
    }
    // The bound counts the line being read: `line(n)` is n units long.
    expect(readAll([`${line(100)}\n\n`], 100)).toEqual({ usage: usage(1, 1, 2), skipped: 0 })
    expect(readAll([`${line(101)}\n\n`], 100)).toEqual({ usage: undefined, skipped: 1 })
    expect(readAll([`${line(101)}\n\n${usageEvent}`], 100)).toEqual({
      usage: usage(4, 6, 10),
      skipped: 1,
    })
    // Its data lines count too: two lines of 60 outgrow 100 together, not apart.
    const sixty = `data: ${'y'.repeat(54)}\n`
    expect(readAll([`${sixty}${sixty}\n${usageEvent}`], 100).skipped).toBe(1)
    expect(readAll([`${sixty}\n${sixty}\n${usageEvent}`], 100).skipped).toBe(0)
  })

  it('does not hold a 10 MB event: even one that holds a usage is dropped, fed in any pieces', () => {
    const pad = 'z'.repeat(64 * 1024)
    const pieces = ['data: {"usage":{"prompt_tokens":1,"completion_tokens":1},"pad":"']
    for (let i = 0; i < 160; i++) pieces.push(pad) // 10 MiB, with no line end
    pieces.push('"}\n\n', usageEvent)
    expect(pieces.join('').length).toBeGreaterThan(10 * 1024 * 1024)
    expect(readAll(pieces)).toEqual({ usage: usage(4, 6, 10), skipped: 1 })
    // The same event within the bound is read: it was dropped for its size alone.
    expect(readAll(pieces, 11 * 1024 * 1024).usage).toEqual(usage(1, 1, 2))
    expect(DEFAULT_MAX_EVENT_LENGTH).toBe(1_048_576)
  })
})

describe('malformed input', () => {
  const fragment = fc.constantFrom(
    'data:',
    'data: ',
    'event: x',
    ':',
    '\n',
    '\r',
    '\r\n',
    '{',
    '}',
    '"usage"',
    ':{',
    '"prompt_tokens":',
    '"input_tokens":',
    '"output_tokens":',
    '"message":{',
    '"response":{',
    '1',
    '-1',
    '1e999',
    'null',
    '[DONE]',
    '\uFEFF',
    '\uD83D',
    '😀',
    ',',
  )
  const piece = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join('')),
    fc.uint8Array({ maxLength: 30 }),
  )

  it('never throws, and any usage it gives is whole numbers ≥ 0', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 20 }),
        fc.integer({ min: 1, max: 200 }),
        (pieces, max) => {
          const reader = usageReader({ maxEventLength: max }).stream()
          for (const p of pieces) reader.write(p)
          const tokens = reader.end()
          if (tokens !== undefined) expect(Number.isSafeInteger(tokens) && tokens >= 0).toBe(true)
          const full = readAll(pieces, max).usage
          if (full !== undefined) {
            for (const value of Object.values(full)) {
              expect(Number.isSafeInteger(value) && value >= 0).toBe(true)
            }
          }
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('ignores a chunk that is neither text nor bytes', () => {
    const reader = sseUsage()
    for (const junk of [undefined, null, 42, {}, [1, 2]]) reader.write(junk as never)
    reader.write(OPENAI_CHAT)
    expect(reader.end()).toEqual(usage(19, 10, 29))
  })
})

it('usageReader measures a stream as it does a JSON answer', () => {
  const stream = usageReader({ measure: (u) => u.inputTokens - u.cacheReadTokens }).stream()
  stream.write(ANTHROPIC)
  expect(stream.end()).toBe(25)
  expect(usageReader({ measure: 'output' }).stream().end()).toBeUndefined()
})
