import { invalidOption } from '../options/option-values.js'
import type { ProxyTrust } from './proxy-trust.js'

/**
 * The forwarding-header reader of a middleware composed without one: a `trustProxy` that trusts
 * a proxy is refused at start-up, naming it. Apart from proxy-trust.ts, so that such a bundle
 * holds none of the parsers, and a default one not this refusal.
 */
export const NO_PROXIES: ProxyTrust = () => {
  throw invalidOption(
    'trustProxy',
    "trusting a proxy needs the forwarding headers' parsers, which this middleware was not composed with: add proxies: trustedProxies to createRateLimit's parts",
  )
}
