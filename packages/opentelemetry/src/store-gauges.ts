import type { Meter } from '@opentelemetry/api'
import type { StoreKind } from '@tollgate/core/observe'
import { ATTRIBUTES, INSTRUMENTS } from './names.js'

const FIRST_USE = Object.freeze({ [ATTRIBUTES.loadReason]: 'first_use' })
const NOSCRIPT = Object.freeze({ [ATTRIBUTES.loadReason]: 'noscript' })

type MemoryFigures = { readonly size: number; readonly bytes: number; readonly evictions: number }
type RedisFigures = { readonly scriptLoads: number; readonly scriptReloads: number }

/**
 * Gauges read from the stores behind observed limiters, at each collection: a memory store's
 * entries, bytes and evictions, a Redis store's script loads (first use, or after NOSCRIPT). Several stores of a kind are
 * summed (one series each): attributes never tell stores apart by anything they hold.
 */
export function observeStores(meter: Meter) {
  const memory = new Set<MemoryFigures>()
  const redis = new Set<RedisFigures>()
  const entries = meter.createObservableGauge(INSTRUMENTS.memoryEntries, {
    description: 'Keys a memory store holds',
    unit: '{entry}',
  })
  const bytes = meter.createObservableGauge(INSTRUMENTS.memoryBytes, {
    description: "The bytes a memory store's state takes (never above its maxBytes)",
    unit: 'By',
  })
  const evictions = meter.createObservableCounter(INSTRUMENTS.memoryEvictions, {
    description:
      'Live keys a full memory store dropped to make room (fresh keys are reused freely)',
    unit: '{eviction}',
  })
  const loads = meter.createObservableCounter(INSTRUMENTS.redisScriptLoads, {
    description: 'Scripts the Redis store sent by source: on first use, or again after NOSCRIPT',
    unit: '{load}',
  })
  meter.addBatchObservableCallback(
    (result) => {
      if (memory.size > 0) {
        let size = 0
        let held = 0
        let evicted = 0
        for (const store of memory) {
          size += store.size
          held += store.bytes
          evicted += store.evictions
        }
        result.observe(entries, size)
        result.observe(bytes, held)
        result.observe(evictions, evicted)
      }
      if (redis.size > 0) {
        let first = 0
        let again = 0
        for (const store of redis) {
          first += store.scriptLoads
          again += store.scriptReloads
        }
        result.observe(loads, first, FIRST_USE)
        result.observe(loads, again, NOSCRIPT)
      }
    },
    [entries, bytes, evictions, loads],
  )
  return {
    add(store: object, kind: StoreKind): void {
      if (kind === 'memory') memory.add(store as MemoryFigures)
      const reloads = (store as Partial<RedisFigures>).scriptReloads
      if (kind === 'redis' && typeof reloads === 'number') redis.add(store as RedisFigures)
    },
  }
}
