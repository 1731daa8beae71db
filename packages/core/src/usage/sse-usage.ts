import { checkWhole } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import {
  mergeUsage,
  normalise,
  type RawUsage,
  type TokenUsage,
  usageObjectOf,
} from './read-usage.js'

/**
 * The most of one event the reader holds: 1 Mi UTF-16 code units (what `String.length`
 * counts; about as many bytes of JSON text). OpenAI's chunks and Anthropic's events are a few
 * hundred; the Responses API's `response.completed` repeats the whole answer, so a stream with
 * a longer answer needs a larger bound to be read.
 */
export const DEFAULT_MAX_EVENT_LENGTH = 1_048_576

/** The part of the web's `TextDecoder` the reader uses (the core is typed without the DOM). */
type Utf8Decoder = {
  decode(input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }): string
}
type Utf8DecoderConstructor = new (label: 'utf-8', options: { ignoreBOM: boolean }) => Utf8Decoder

/** Options of `sseUsage`: how much of one event it holds. */
export type SseUsageOptions = {
  /**
   * The most of one event held at once, in UTF-16 code units: its `data` lines and the line
   * being read. An event that outgrows it is dropped as it arrives (counted in
   * `skippedEvents`), and the reader takes up again at the next event: memory stays bounded
   * whatever the stream holds, at the cost of that event's usage.
   * @default 1_048_576
   */
  readonly maxEventLength?: number | undefined
}

/** Reads the usage an LLM API reports at the end of a server-sent-events body. */
export type SseUsageReader = {
  /**
   * Feeds the next piece of the body, as bytes (UTF-8, split anywhere, within a character
   * too) or text, split anywhere. Never throws; a piece that is neither is ignored, as is
   * anything written after `end()`.
   */
  readonly write: (chunk: string | ArrayBufferView | ArrayBuffer) => void
  /**
   * Ends the body and returns the usage its events reported (undefined for none). An event the
   * body ends without its blank line still counts, a line cut off by the end does not. Calling
   * it again returns the same.
   */
  readonly end: () => TokenUsage | undefined
  /** Events dropped for outgrowing `maxEventLength`. */
  readonly skippedEvents: () => number
}

/**
 * An incremental reader of the usage in a streamed answer (`text/event-stream`), fed as the
 * bytes arrive and holding only the event being read (see `maxEventLength`):
 *
 * - **OpenAI's chat completions** with `stream_options: { include_usage: true }`: the last
 *   chunk before `data: [DONE]` carries `usage` (the others `usage: null`);
 * - **OpenAI's Responses API**: the `response.completed` event carries `response.usage`;
 * - **Anthropic's messages**: `message_start` carries `message.usage` (the input), and each
 *   `message_delta` the usage so far (the output, cumulative), merged over it.
 *
 * Events are parsed as the HTML standard parses them (lines end at CR, LF or CRLF; one BOM
 * is skipped; only `data` fields are read). An event that is no JSON, or reports no usage, is
 * passed over; a later report of a figure replaces an earlier one. Never throws.
 * @example
 * const reader = sseUsage()
 * for await (const chunk of response.body) reader.write(chunk)
 * const usage = reader.end() // { inputTokens, outputTokens, totalTokens, … } | undefined
 */
export function sseUsage(options: SseUsageOptions = {}): SseUsageReader {
  refuseUnknownOptions(options, ['maxEventLength'], 'sseUsage()')
  const max = checkWhole(
    'maxEventLength',
    options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH,
    { min: 1 },
    'sseUsage()',
  )
  let decoder: Utf8Decoder | undefined
  // The reader's own: a global regular expression carries its position in `lastIndex`.
  const lineEnd = /[\r\n]/g
  /** The line being read, without its end. */
  let line = ''
  /** The event's `data` lines, each followed by LF, as the standard joins them. */
  let data = ''
  /** The event outgrew `max`: the rest of it is passed over, up to its blank line. */
  let skipping = false
  /** While skipping: whether the line being passed over has anything in it yet. */
  let lineHasText = false
  /** The last piece ended on CR: an LF starting the next one ends no second line. */
  let afterCR = false
  let started = false
  let ended = false
  let skipped = 0
  let result: TokenUsage | undefined
  const raw: RawUsage = {}

  function overflow(): void {
    skipping = true
    skipped++
    line = ''
    data = ''
  }

  function append(piece: string): void {
    if (piece === '') return
    if (skipping) {
      lineHasText = true
      return
    }
    if (line.length + piece.length + data.length > max) {
      overflow()
      lineHasText = true
      return
    }
    line += piece
  }

  function endLine(): void {
    if (skipping) {
      // The blank line that ends the skipped event: the next one is read again.
      if (!lineHasText) skipping = false
      lineHasText = false
      return
    }
    const text = line
    line = ''
    if (text === '') {
      dispatch()
      return
    }
    if (text.startsWith(':')) return // a comment
    const colon = text.indexOf(':')
    const name = colon < 0 ? text : text.slice(0, colon)
    if (name !== 'data') return
    let value = colon < 0 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (data.length + value.length + 1 > max) {
      // The line has ended: the next blank line ends the skipped event.
      overflow()
      lineHasText = false
      return
    }
    data += `${value}\n`
  }

  function dispatch(): void {
    const text = data.slice(0, -1)
    data = ''
    // Most events are deltas of text: those that cannot hold a usage object are not parsed.
    // JSON could spell the key with escapes (`"\u0075sage"`); no API does.
    if (!text.includes('"usage"')) return
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      return // not JSON: `[DONE]`, or a malformed event
    }
    const usage = usageObjectOf(json)
    if (usage !== undefined) mergeUsage(raw, usage)
  }

  function feed(text: string): void {
    let from = 0
    if (!started && text !== '') {
      started = true
      if (text.startsWith('\uFEFF')) from = 1
    }
    if (afterCR && text.length > from) {
      afterCR = false
      if (text[from] === '\n') from++
    }
    lineEnd.lastIndex = from
    for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
      const at = match.index
      append(text.slice(from, at))
      endLine()
      from = at + 1
      if (text[at] === '\r') {
        if (from === text.length) afterCR = true
        else if (text[from] === '\n') from++
      }
      lineEnd.lastIndex = from
    }
    append(text.slice(from))
  }

  /** Bytes a decoder still holds (a character cut in two) end as U+FFFD, as at the end. */
  function flushBytes(): void {
    if (decoder === undefined) return
    const rest = decoder.decode()
    if (rest !== '') feed(rest)
  }

  return {
    write(chunk) {
      if (ended) return
      if (typeof chunk === 'string') {
        flushBytes()
        feed(chunk)
      } else if (ArrayBuffer.isView(chunk) || chunk instanceof ArrayBuffer) {
        // The BOM is kept here and skipped by `feed`, for text and bytes alike.
        // A global of every runtime the core runs on (Node, Workers, Deno, Bun, browsers).
        const { TextDecoder } = globalThis as unknown as { TextDecoder: Utf8DecoderConstructor }
        decoder ??= new TextDecoder('utf-8', { ignoreBOM: true })
        feed(decoder.decode(chunk, { stream: true }))
      }
    },
    end() {
      if (!ended) {
        flushBytes()
        ended = true
        if (!skipping && data !== '') dispatch()
        line = ''
        data = ''
        result = normalise(raw)
      }
      return result
    },
    skippedEvents: () => skipped,
  }
}
