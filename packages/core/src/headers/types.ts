/**
 * Reads one request header by its lower-case name. Adapters wrap their framework's accessor:
 * Node gives a string or, for some repeated headers, an array (one entry per header line);
 * fetch `Headers.get` gives the lines already joined with ", ". Both are accepted.
 * @example (name) => req.headers[name]        // Express, Koa (Node IncomingMessage)
 * @example (name) => c.req.header(name)        // Hono
 */
export type HeaderAccessor = (name: string) => string | readonly string[] | undefined

/**
 * Response headers as name/value pairs, in order. A name may repeat: adapters append every
 * entry (`res.append`, `ctx.append`, `c.header(name, value, { append: true })`), and fetch
 * runtimes can pass the array straight to `new Headers(entries)`.
 */
export type HeaderEntries = ReadonlyArray<readonly [name: string, value: string]>

/**
 * Receives response fields one at a time, in the order of `HeaderEntries`: how adapters write
 * an admitted request's fields without the entries being built (`Tollgate.writeFields`).
 */
export type FieldWriter = {
  /**
   * Receives one field, as the next of the `HeaderEntries`; `single` is true for a field that
   * holds one value (`X-RateLimit-*`, draft-6's three Integers): a writer that may find it on
   * the response already sets it rather than appending, with no lookup by name.
   */
  write(name: string, value: string, single?: true): void
}

/** Joins a header that arrived as several lines into one comma-separated list. */
export function headerText(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined || typeof value === 'string') return value
  return value.length === 0 ? undefined : value.join(',')
}
