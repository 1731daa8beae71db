/**
 * Where the benchmark's requests come from. One client keeps every cache warm (its limiter
 * state, its partition key, its key string); a real gateway sees many clients, most of them
 * not seen for a while. `clients > 1`: that many IPv4 addresses, each request the next one of a
 * fixed random order, so the requests of one round are from different clients and the limiter
 * meets an address again only after every other one.
 */
import { shuffledOrder } from '../memory/keys.js'

const ONE_CLIENT = '127.0.0.1'

/** A function giving each request's client address, in turn. */
export function clientAddresses(clients: number): () => string {
  if (clients <= 1) return () => ONE_CLIENT
  const order = shuffledOrder(clients, 0x1f2e3d4c)
  const addresses = Array.from(order, (n) => `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`)
  let next = 0
  return () => {
    const address = addresses[next]!
    next = next + 1 === addresses.length ? 0 : next + 1
    return address
  }
}
