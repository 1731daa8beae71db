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
  NodeResponseFieldWriter,
  type RequestHooks,
  refundPredicate,
  refundQuietly,
  requestReaders,
  setNodeResponseFields,
} from '@tollgate/core'
import type { Context, Middleware, Next } from 'koa'
import { defaultUser, identitySource, requestFacts } from './request.js'
import {
  type Denial,
  installOnerror,
  keepFieldsOnError,
  onerrorKeepingFields,
  sendDenial,
  statusOfError,
} from './response.js'

export * from '@tollgate/core'
export type { Denial } from './response.js'

export type KoaRateLimitOptions = CoreOptions &
  RequestHooks<Context> & {
    /** Replaces the default denial (status and problem body); headers are already set. */
    readonly onLimited?:
      | ((ctx: Context, denial: Denial, verdict?: Verdict) => void | Promise<void>)
      | undefined
  }

/**
 * Rate-limits a Koa app or router.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: KoaRateLimitOptions = {},
): Middleware {
  checkHooks(options)
  const gate = createTollgate(rules, options)
  const { limiter, requestIdentities } = gate
  const read = requestReaders(options, defaultUser, gate)
  const headers = identitySource()
  const fields = new NodeResponseFieldWriter()
  const { skip } = options
  const onShadowDenied = guardShadowDeniedHook(options)
  const onLimited = options.onLimited ?? sendDenial
  // An app's own answer gets the fields but not the problem body's Content-Type.
  const ownAnswer = options.onLimited !== undefined
  const refundIf = refundPredicate(options.refund)
  // Every field this middleware may put on an admitted request's response.
  const fieldNames = options.exposeHeaders
    ? [...gate.responder.headerNames, 'Access-Control-Expose-Headers']
    : gate.responder.headerNames
  const onerror = onerrorKeepingFields(fieldNames)

  /**
   * Runs `onLimited`. An error it throws (`ctx.throw(429)`, say) keeps the fields, which Koa's
   * error handler would otherwise remove with every other header.
   */
  function answerDenial(ctx: Context, denial: Denial, verdict: Verdict | undefined) {
    const failed = (error: unknown): never => {
      keepFieldsOnError(ctx.res, fieldNames, error)
      throw error
    }
    try {
      const answered = onLimited(ctx, denial, verdict)
      return isPromise(answered) ? answered.then(undefined, failed) : answered
    } catch (error) {
      return failed(error)
    }
  }

  function finish(ctx: Context, next: Next, outcome: Verdict | Handled) {
    // A lone verdict is an admission whose response was not built: its fields are written
    // straight from it.
    const response = isHandled(outcome) ? outcome.response : undefined
    const verdict = isHandled(outcome) ? outcome.verdict : outcome
    if (verdict !== undefined && onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, ctx)
    if (response === undefined) fields.put(ctx.res, verdict!, gate.writeFields)
    else if (response.allowed) setNodeResponseFields(ctx.res, response.headers)
    else {
      const written = ownAnswer ? fieldsForOwnAnswer(response.headers) : response.headers
      setNodeResponseFields(ctx.res, written)
      return answerDenial(ctx, response, verdict)
    }
    // Without refunds nothing is left to do once the app has answered, and an error's fields
    // are kept by `onerror`: no promise or closure on `next()`.
    if (refundIf === undefined && installOnerror(ctx, onerror)) return next()
    const failed = (error: unknown) => {
      keepFieldsOnError(ctx.res, fieldNames, error)
      if (verdict !== undefined && refundIf?.(statusOfError(error), ctx))
        refundQuietly(limiter, verdict)
      throw error
    }
    if (refundIf === undefined || verdict === undefined) return next().then(undefined, failed)
    return next().then(() => {
      if (refundIf(ctx.status, ctx)) refundQuietly(limiter, verdict)
    }, failed)
  }

  // Sync until it must wait: with the memory store, no promise is made here for the limiter.
  return function tollgate(ctx, next) {
    if (skip?.(ctx)) return next()
    const handled = gate.handleAdmitted(requestFacts(ctx, requestIdentities, read, headers))
    return isPromise(handled)
      ? handled.then((settled) => finish(ctx, next, settled))
      : finish(ctx, next, handled)
  }
}
