import type { Limiter, LimitResponse, MaybePromise, RuleConfig, Verdict } from '@tollgate/core'
import {
  type CoreOptions,
  checkHooks,
  createTollgate,
  isPromise,
  type RefundWhen,
  refundPredicate,
  refundQuietly,
} from '@tollgate/core'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { defaultUser, type RequestReaders, requestFacts, type UserId } from './request.js'
import { type Denial, sendDenial, setHeaders } from './response.js'

export * from '@tollgate/core'
export type { UserId } from './request.js'
export type { Denial } from './response.js'

export type ExpressRateLimitOptions = CoreOptions & {
  /** Requests for which this returns true are not counted or limited at all (health checks…). */
  readonly skip?: ((req: Request, res: Response) => boolean) | undefined
  /** The authenticated user's id, for rules keyed on `user`. @default `req.user` (or `req.user.id`) */
  readonly user?: ((req: Request) => UserId) | undefined
  /** The client's plan, for rules that match on `plan`. @default none */
  readonly plan?: ((req: Request) => string | undefined) | undefined
  /** Identities of your own, for rules that key on them (e.g. `account` for login limits). */
  readonly identities?: ((req: Request) => Record<string, string | undefined>) | undefined
  /** Give the charge back for requests that end this way. @default never */
  readonly refund?: RefundWhen<Request> | undefined
  /** Replaces the default denial (`res.status(status).end(body)`); headers are already set. */
  readonly onLimited?:
    | ((req: Request, res: Response, next: NextFunction, denial: Denial, verdict?: Verdict) => void)
    | undefined
  /** Called when shadow-mode rules would have denied the request (it is let through). */
  readonly onShadowDenied?: ((verdict: Verdict, req: Request) => void) | undefined
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
  checkHooks(options, ['skip', 'user', 'plan', 'identities', 'onLimited', 'onShadowDenied'])
  const { limiter, identities, responder } = createTollgate(rules, options)
  const read: RequestReaders = {
    user: options.user ?? defaultUser,
    plan: options.plan,
    identities: options.identities,
  }
  const { skip, onShadowDenied } = options
  const onLimited = options.onLimited ?? sendDenial
  const refundIf = refundPredicate(options.refund)

  function apply(
    response: LimitResponse,
    verdict: Verdict | undefined,
    req: Request,
    res: Response,
    next: NextFunction,
  ) {
    setHeaders(res, response.headers)
    if (!response.allowed) return onLimited(req, res, next, response, verdict)
    if (refundIf !== undefined && verdict !== undefined) {
      res.once('finish', () => {
        if (refundIf(res.statusCode, req)) refundQuietly(limiter, verdict)
      })
    }
    next()
  }

  function decided(verdict: Verdict, req: Request, res: Response, next: NextFunction) {
    if (onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, req)
    if (!responder.usesPartitionKeys)
      return apply(responder.respond(verdict, verdict.at), verdict, req, res, next)
    responder
      .respondAsync(verdict, verdict.at)
      .then(
        (response) => apply(response, verdict, req, res, next),
        (error: unknown) => failed(error, req, res, next),
      )
      .catch(next)
  }

  // A store failure is already a verdict (fail-open or fail-closed); what reaches here is an
  // error the client must hear about (a cost that can never fit: 400), or a bug for Express.
  function failed(error: unknown, req: Request, res: Response, next: NextFunction) {
    const response = responder.respondToError(error)
    if (response === undefined) return next(error)
    apply(response, undefined, req, res, next)
  }

  return function tollgate(req, res, next) {
    let verdict: MaybePromise<Verdict>
    try {
      if (skip?.(req, res)) return next()
      verdict = limiter.decide(requestFacts(req, identities, read))
    } catch (error) {
      return failed(error, req, res, next)
    }
    if (!isPromise(verdict)) return decided(verdict, req, res, next)
    // An app hook that throws (onLimited, onShadowDenied) goes to Express, as it would if sync.
    verdict
      .then(
        (settled) => decided(settled, req, res, next),
        (error: unknown) => failed(error, req, res, next),
      )
      .catch(next)
  }
}
