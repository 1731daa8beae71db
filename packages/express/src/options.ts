import type { CoreOptions, Denial, RequestHooks, Verdict } from '@tollgate/core'
import type { NextFunction, Request, Response } from 'express'

/**
 * Options of the Express `rateLimit`: the core's (store, headers, failure behaviour…), the request
 * hooks (`user`, `plan`, `skip`…) and what a denial answers.
 * @example
 * app.use(rateLimit(rules, { user: (req) => req.get('x-user-id'), skip: (req) => req.path === '/health' }))
 */
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
        ) => unknown)
      | undefined
  }
