import { Hono } from 'hono'

/** What the fake upstream reads of an OpenAI chat completion request. */
export type ChatRequest = {
  readonly model?: string
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly max_tokens?: number
  readonly stream?: boolean
  readonly stream_options?: { readonly include_usage?: boolean }
}

/** The answer's words: one token each, as far as this fake counts. */
const WORDS = 'Rate limits are counted in tokens when the answer decides the cost'.split(' ')

/** A prompt's tokens, as this fake counts them: one per four characters. */
export const promptTokens = (chat: ChatRequest) =>
  Math.ceil((chat.messages ?? []).reduce((sum, m) => sum + m.content.length, 0) / 4)

export type UpstreamOptions = {
  /** Resolves when a streamed answer may send its last events (a test holds it mid-stream). */
  readonly hold?: () => Promise<void>
}

/**
 * A local stand-in for an OpenAI-compatible API: `POST /v1/chat/completions` answers with
 * `max_tokens` words at most (12 without it), as JSON or, with `stream: true`, as server-sent
 * events whose last chunk carries the usage when `stream_options.include_usage` asks for it.
 * The model `"overloaded"` answers 503, as an upstream does under load.
 */
export function createUpstream(options: UpstreamOptions = {}): Hono {
  const app = new Hono()
  app.post('/v1/chat/completions', async (c) => {
    const chat = await c.req.json<ChatRequest>()
    if (chat.model === 'overloaded') {
      return c.json({ error: { message: 'The server is overloaded', type: 'server_error' } }, 503)
    }
    const words = WORDS.slice(0, Math.min(chat.max_tokens ?? WORDS.length, WORDS.length))
    const prompt = promptTokens(chat)
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: words.length,
      total_tokens: prompt + words.length,
    }
    if (chat.stream !== true) {
      const message = { role: 'assistant', content: words.join(' ') }
      return c.json({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ message }], usage })
    }
    const encoder = new TextEncoder()
    const event = (data: unknown) => encoder.encode(`data: ${JSON.stringify(data)}\n\n`)
    const chunk = (delta: object, last: object = {}) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, ...last }],
      ...(chat.stream_options?.include_usage ? { usage: null } : {}),
    })
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(event(chunk({ role: 'assistant', content: '' })))
        for (const [i, word] of words.entries()) {
          controller.enqueue(event(chunk({ content: i === 0 ? word : ` ${word}` })))
        }
        await options.hold?.()
        try {
          controller.enqueue(event(chunk({}, { finish_reason: 'stop' })))
          if (chat.stream_options?.include_usage) {
            controller.enqueue(event({ id: 'chatcmpl-1', choices: [], usage }))
          }
          controller.enqueue(encoder.encode('data: [DONE]\n\n'))
          controller.close()
        } catch {
          // The client went away meanwhile: the stream was cancelled.
        }
      },
    })
    return c.body(body, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
  })
  return app
}
