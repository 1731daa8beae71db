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
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { defaultUser, identitySource, requestFacts } from './request.js'
import { type Denial, sendDenial } from './response.js'

export * from '@tollgate/core'
export type { Denial } from './response.js'

export type ExpressRateLimitOptions = CoreOptions &
  Omit<RequestHooks<Request>, 'skip'> & {
    /** Requests for which this returns true are not counted or limited at all (health checks…). */
    readonly skip?: ((req: Request, res: Response) => boolean) | undefined
    /** Replaces the default denial (`res.status(status).end(body)`); headers are already set. */
    readonly onLimited?:
      | ((
          req: Request,
          res: Response,
          next: NextFunction,
          denial: Denial,
          verdict?: Verdict,
        ) => void | Promise<void>)
      | undefined
  }

/**
 * Rate-limits an Express app or router.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: ExpressRateLimitOptions = {},
): RequestHandler {
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

  function finish(outcome: Verdict | Handled, req: Request, res: Response, next: NextFunction) {
    // A lone verdict is an admission whose response was not built: its fields are written
    // straight from it.
    const response = isHandled(outcome) ? outcome.response : undefined
    const verdict = isHandled(outcome) ? outcome.verdict : outcome
    if (verdict !== undefined && onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, req)
    if (response === undefined) fields.put(res, verdict!, gate.writeFields)
    else if (response.allowed) setNodeResponseFields(res, response.headers)
    else {
      setNodeResponseFields(
        res,
        ownAnswer ? fieldsForOwnAnswer(response.headers) : response.headers,
      )
      // An async onLimited that rejects goes to Express's error handling, as a throw does
      // (Express 4 would leave the rejection unhandled and the request hanging).
      const answered: unknown = onLimited(req, res, next, response, verdict)
      if (isPromise(answered)) answered.then(undefined, next)
      return
    }
    if (refundIf !== undefined && verdict !== undefined) {
      res.once('finish', () => {
        if (refundIf(res.statusCode, req)) refundQuietly(limiter, verdict)
      })
    }
    next()
  }

  return function tollgate(req, res, next) {
    if (skip?.(req, res)) return next()
    const handled = gate.handleAdmitted(requestFacts(req, requestIdentities, read, headers))
    if (!isPromise(handled)) return finish(handled, req, res, next)
    // An error, or an onLimited hook that throws, goes to Express.
    handled.then((settled) => finish(settled, req, res, next)).catch(next)
  }
}
