import type { Limiter, RuleConfig, Verdict } from '@tollgate/core'
import {
  type CoreOptions,
  checkHooks,
  createTollgate,
  fieldsForOwnAnswer,
  guardShadowDeniedHook,
  type Handled,
  isHandled,
  isPromise,
  isSingleValuedName,
  REQUEST_HOOKS,
  type RequestHooks,
  refundPredicate,
  refundQuietly,
  requestReaders,
} from '@tollgate/core'
import type { Context, MiddlewareHandler, Next } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import {
  addressFrom,
  defaultAddress,
  defaultUser,
  identitySource,
  requestFacts,
} from './request.js'
import {
  appendHeaders,
  type Denial,
  markFieldsWritten,
  ResponseFields,
  waitUntil,
  withDenialFields,
} from './response.js'

export * from '@tollgate/core'
export type { Denial } from './response.js'

export type HonoRateLimitOptions = CoreOptions &
  RequestHooks<Context> & {
    /**
     * The client's connection, e.g. `getConnInfo` from `hono/bun` or `@hono/node-server/conninfo`.
     * @default Node, Bun, Deno and Cloudflare Workers are recognised without it
     */
    readonly getConnInfo?: GetConnInfo | undefined
    /** Replaces the default denial; the rate-limit headers are already set with `c.header`. */
    readonly onLimited?:
      | ((c: Context, denial: Denial, verdict?: Verdict) => Response | Promise<Response>)
      | undefined
  }

/**
 * Rate-limits a Hono app, on Node, Bun, Deno or Cloudflare Workers.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: HonoRateLimitOptions = {},
): MiddlewareHandler {
  checkHooks(options, [...REQUEST_HOOKS, 'getConnInfo'])
  const gate = createTollgate(rules, options)
  const { limiter, requestIdentities } = gate
  const read = {
    ...requestReaders(options, defaultUser, gate),
    address: options.getConnInfo === undefined ? defaultAddress : addressFrom(options.getConnInfo),
  }
  const headers = identitySource()
  const fields = new ResponseFields()
  const { skip } = options
  const onShadowDenied = guardShadowDeniedHook(options)
  const ownAnswer = options.onLimited
  const refundIf = refundPredicate(options.refund)

  function finish(
    c: Context,
    next: Next,
    outcome: Verdict | Handled,
  ): Promise<Response | undefined> {
    // A lone verdict is an admission whose response was not built: its fields are written
    // straight from it.
    const response = isHandled(outcome) ? outcome.response : undefined
    const verdict = isHandled(outcome) ? outcome.verdict : outcome
    if (verdict !== undefined && onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, c)
    if (response !== undefined && !response.allowed) {
      // An app's own answer gets the fields but not the problem body's Content-Type.
      const entries =
        ownAnswer === undefined ? response.headers : fieldsForOwnAnswer(response.headers)
      for (let i = 0; i < entries.length; i++) {
        const name = entries[i]![0]
        c.header(name, entries[i]![1], isSingleValuedName(name) ? undefined : { append: true })
      }
      markFieldsWritten(c)
      if (ownAnswer === undefined)
        return Promise.resolve(c.body(response.body, response.status as ContentfulStatusCode))
      // A Response built by hand (not with c.json or c.body) has none of the fields yet.
      return Promise.resolve(ownAnswer(c, response, verdict)).then((answer) =>
        withDenialFields(answer, entries),
      )
    }
    return next().then(() => {
      // Added to the finished response, so that handlers returning a `Response` of their own
      // (which drops headers set earlier with `c.header`) carry them as well.
      if (response === undefined) fields.put(c, verdict!, gate.writeFields)
      else appendHeaders(c, response.headers)
      if (verdict !== undefined && refundIf?.(c.res.status, c))
        waitUntil(c, refundQuietly(limiter, verdict))
      return undefined
    })
  }

  // Not an async function: with the memory store, an admitted request chains one promise on
  // `next()`, where an async function would add its own promise and the state of its awaits.
  // Whatever throws still reaches Hono as a rejection, as from an async function.
  return function tollgate(c, next) {
    try {
      if (skip?.(c)) return next()
      const handled = gate.handleAdmitted(requestFacts(c, requestIdentities, read, headers))
      return isPromise(handled)
        ? handled.then((settled) => finish(c, next, settled))
        : finish(c, next, handled)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}
