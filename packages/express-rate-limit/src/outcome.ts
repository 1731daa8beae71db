import type { Clock } from '@tollgate/core'
import { isPromise } from '@tollgate/core/adapter'
import type { Request, Response } from 'express'
import type { Config } from './options.js'

type Ending = 'finish' | 'close' | 'error'

/**
 * The response's ends that `skipFailedRequests` and `skipSuccessfulRequests` read, listened to
 * as the request enters (before any wait), so that none is missed; `refundWhen`, once the
 * request was counted, gives the hit back when the response turns out to be one to skip: a
 * failure (status ≥ 400 by default, a connection closed before the end, an error) or a success.
 * A hit is given back at most once, and not once its window has ended.
 */
export function watchOutcome(res: Response, failures: boolean) {
  const seen = new Set<Ending>()
  const waiting = new Map<Ending, () => void>()
  const on = (ending: Ending) => {
    res.once(ending, () => {
      seen.add(ending)
      waiting.get(ending)?.()
    })
  }
  on('finish')
  if (failures) {
    on('close')
    on('error')
  }
  const when = (ending: Ending, then: () => void) => {
    if (seen.has(ending)) void Promise.resolve().then(then)
    else waiting.set(ending, then)
  }
  return {
    refundWhen(
      config: Config,
      req: Request,
      res: Response,
      key: string,
      resetTime: Date | undefined,
      clock: Clock,
    ): void {
      let refunded = false
      const refund = () => {
        if (refunded) return
        if (resetTime !== undefined && clock.now() >= resetTime.getTime()) return
        refunded = true
        const done = config.store.decrement(key)
        if (isPromise(done)) done.then(undefined, (error) => config.logger.error(error))
      }
      const onSuccess = (success: boolean) => {
        if (success ? config.skipSuccessfulRequests : config.skipFailedRequests) refund()
      }
      when('finish', () => {
        const success = config.requestWasSuccessful(req, res)
        if (isPromise(success)) success.then(onSuccess, (error) => config.logger.error(error))
        else onSuccess(success)
      })
      if (!config.skipFailedRequests) return
      when('close', () => {
        if (!res.writableEnded) refund()
      })
      when('error', refund)
    },
  }
}
