// A response body's text, held only up to a bound, for reading its cost once it has been sent.

/** The size of a piece of body, or undefined for what is no body (passed over). */
export function sizeOf(chunk: unknown): number | undefined {
  if (typeof chunk === 'string') return chunk.length
  if (ArrayBuffer.isView(chunk) || chunk instanceof ArrayBuffer) return chunk.byteLength
  return undefined
}

/** The part of the web's `TextDecoder` used (the core is typed without the DOM). */
type Utf8Decoder = {
  decode(input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }): string
}

export type BodyText = {
  write(chunk: string | ArrayBufferView | ArrayBuffer, size: number): void
  /** The text held, or undefined when the body outgrew the bound. */
  end(): string | undefined
  cut(): boolean
}

/**
 * A body's text, held up to `max` (bytes; a text piece counts its length): past it, what was
 * held is dropped at once and nothing more is kept, so memory stays bounded whatever is sent.
 */
export function bodyText(max: number): BodyText {
  let parts: string[] | undefined = []
  let size = 0
  let decoder: Utf8Decoder | undefined
  const flush = () => {
    const rest = decoder?.decode()
    if (rest) parts!.push(rest)
  }
  return {
    write(chunk, bytes) {
      if (parts === undefined) return
      size += bytes
      if (size > max) {
        parts = undefined
        decoder = undefined
        return
      }
      if (typeof chunk === 'string') {
        flush()
        parts.push(chunk)
        return
      }
      const { TextDecoder } = globalThis as unknown as {
        TextDecoder: new (label: 'utf-8') => Utf8Decoder
      }
      decoder ??= new TextDecoder('utf-8')
      parts.push(decoder.decode(chunk, { stream: true }))
    },
    end() {
      if (parts === undefined) return undefined
      flush()
      return parts.join('')
    },
    cut: () => parts === undefined,
  }
}
