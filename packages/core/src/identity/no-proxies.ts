import { RateLimitError } from '../errors.js'
import type { ProxyTrust } from './proxy-trust.js'

/**
 * The lean entries' forwarding-header reader when the app passes no `proxies`: a `trustProxy`
 * that trusts a proxy is refused at start-up, naming it. Apart from proxy-trust.ts, so that a
 * lean bundle holds none of the parsers, and a default one not this refusal.
 */
export const NO_PROXIES: ProxyTrust = () => {
  throw new RateLimitError(
    'ERR_RL_INVALID_RULE',
    'trustProxy: this entry reads forwarding headers with the parser the app passes: add proxies: trustedProxies (exported beside rateLimit)',
    { field: 'trustProxy' },
  )
}
