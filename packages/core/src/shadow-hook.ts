import { messageOf } from './limiter/report.js'
import type { Verdict } from './limiter/types.js'
import { createWarnOnce, type WarningOptions } from './warnings.js'

// At core's root rather than in adapter/: the main entry exports it (a part apps name), and an
// export of adapter/ listed there first would put the modules it reaches (warnings, the reporter)
// ahead of the others in every bundle, which gzip pays for (one rule on Hono +70 B).

type ShadowDeniedHook<Req> = (verdict: Verdict, req: Req) => unknown

/**
 * The app's `onShadowDenied` hook, made safe to call on the request path, and called only for a
 * verdict a shadow rule would have denied (`shadowDenied` not empty). A shadow rule never
 * changes a response, so a hook that throws, or returns a promise that rejects (which would
 * otherwise go unhandled and can end the process), is reported as WARN_ON_SHADOW_DENIED_THREW
 * and the request goes on. `undefined` when no hook is set. The part a middleware made by
 * `createRateLimit` needs for the `onShadowDenied` option (`shadowHook: shadowDeniedHook`).
 * @example
 * const rateLimit = createRateLimit({ algorithms: { token_bucket: tokenBucket }, shadowHook: shadowDeniedHook })
 */
export function shadowDeniedHook<Req>(
  options: WarningOptions & { readonly onShadowDenied?: ShadowDeniedHook<Req> | undefined },
): ((verdict: Verdict, req: Req) => void) | undefined {
  const hook = options.onShadowDenied
  if (hook === undefined) return undefined
  const warnOnce = createWarnOnce(options)
  const report = (error: unknown) =>
    warnOnce(
      'WARN_ON_SHADOW_DENIED_THREW',
      `onShadowDenied threw or rejected: ${messageOf(error)}; the request went on`,
    )
  return function onShadowDenied(verdict, req) {
    // Asked of every verdict decided: only those a shadow rule would have denied are heard.
    if (verdict.shadowDenied.length === 0) return
    try {
      const result = hook(verdict, req)
      if (typeof (result as { then?: unknown } | undefined)?.then === 'function') {
        ;(result as PromiseLike<unknown>).then(undefined, report)
      }
    } catch (error) {
      report(error)
    }
  }
}
