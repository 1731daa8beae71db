/**
 * The benchmark's Worker: `/decide?n=&c=` makes `n` decisions against one key's object through
 * `durableObjectStore`, `c` at a time, each a subrequest to the object, and answers how many
 * were admitted. The rule never denies, so every decision writes the object's storage.
 */
import { durableObjectStore, type LimiterNamespace } from '@tollgate/cloudflare'
import { tokenBucket } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'

export { TollgateLimiter } from '@tollgate/cloudflare'

const charge: Charge = {
  rule: 'bench',
  algorithm: tokenBucket({ rate: 1_000_000, burst: 1_000_000 }),
  key: 'ip:203.0.113.7',
  cost: 1,
  shadow: false,
}

export default {
  async fetch(request: Request, env: { LIMITER: LimiterNamespace<unknown> }): Promise<Response> {
    const url = new URL(request.url)
    const n = Number(url.searchParams.get('n'))
    const c = Number(url.searchParams.get('c'))
    const store = durableObjectStore(env.LIMITER)
    let started = 0
    let admitted = 0
    const chain = async () => {
      while (started < n) {
        started++
        const outcome = await store.consume([charge], 0)
        if (outcome.decisions[0]!.allowed) admitted++
      }
    }
    await Promise.all(Array.from({ length: c }, chain))
    return Response.json({ admitted })
  },
}
