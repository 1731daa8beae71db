/** Where the fields are read from: a `Headers` object, or any `name → value` lookup. */
export type HeaderSource =
  | {
      /** The field's value, or null or undefined when absent (as `Headers.get`). */
      get(name: string): string | null | undefined
    }
  | ((name: string) => string | null | undefined)

/** Which family of fields a policy was read from. */
export type FieldForm =
  /** `RateLimit-Policy` / `RateLimit` lists of named policies (drafts 8 to 12). */
  | 'current'
  /** `RateLimit: limit=…, remaining=…, reset=…` (draft 7). */
  | 'draft-7'
  /** `RateLimit-Limit`, `-Remaining`, `-Reset` (draft 6). */
  | 'draft-6'
  /** `X-RateLimit-Limit`, `-Remaining`, `-Reset` (GitHub), or `X-Rate-Limit-*` (Twitter/X). */
  | 'x-ratelimit'
  /** `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`. */
  | 'anthropic'
  /** `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (OpenAI, Azure OpenAI, Groq). */
  | 'openai'

/**
 * One quota the server reported. Every figure is optional: a server may send a policy without
 * its current state, or the state without the policy. Times are whole ms, never negative.
 */
export type ReadPolicy = {
  /**
   * The policy's name: the item name of the current form; GitHub's `X-RateLimit-Resource`; the
   * unit of an LLM API's fields (`requests`, `tokens`, …); `''` when the form has no names
   * (drafts 6 and 7, most `X-RateLimit-*`).
   */
  readonly name: string
  /** The partition key (`pk`) as its base64 text, when the server sent one. */
  readonly partitionKey?: string
  /** Units allowed per window (`q`, or the draft-6/7 policy's number). */
  readonly quota?: number
  /** The window of `quota`, in ms (`w` seconds). */
  readonly windowMs?: number
  /**
   * What the quota counts: the current form's `qu` (`requests`, `content-bytes`,
   * `concurrent-requests`), or the unit an LLM API names in its fields (`requests`, `tokens`,
   * `input-tokens`, `output-tokens`). Undefined when the fields do not say.
   */
  readonly quotaUnit?: string
  /** The bucket size Tollgate sends as `burst` beside a rate rule's `q`. */
  readonly burst?: number
  /**
   * The limit of the single-valued forms (`X-RateLimit-Limit`, draft-6/7 `limit`, an LLM API's
   * `-limit-` field). Its window is not sent.
   */
  readonly limit?: number
  /** Units left (`a` in draft 12, `r` in drafts 8 to 11, `remaining`). */
  readonly remaining?: number
  /**
   * Ms from now until the quota is restored: `RateLimit`'s effective window (`w` in draft 12,
   * `t` in drafts 8 to 11), or `reset`; rounded up.
   */
  readonly resetMs?: number
  /** The quota units this response's request consumed (`c`, draft 12), when the server said. */
  readonly cost?: number
}

/** Everything rate-limit related that one response said. */
export type ReadFields = {
  /** `Retry-After` as ms from now, rounded up; undefined when absent or malformed. */
  readonly retryAfterMs: number | undefined
  /** The family the policies come from: the most precise one the response carried. */
  readonly form: FieldForm | undefined
  readonly policies: readonly ReadPolicy[]
}
