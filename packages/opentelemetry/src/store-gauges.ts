import type { Meter } from '@opentelemetry/api'
import type { StoreKind } from '@tollgate/core/observe'
import { INSTRUMENTS } from './names.js'

type MemoryFigures = { readonly size: number; readonly bytes: number; readonly evictions: number }
type RedisFigures = { readonly scriptReloads: number }

/**
 * Gauges read from the stores behind observed limiters, at each collection: a memory store's
 * entries, bytes and evictions, a Redis store's script reloads. Several stores of a kind are
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
  const reloads = meter.createObservableCounter(INSTRUMENTS.redisScriptReloads, {
    description: 'Scripts the Redis store sent again after the server answered NOSCRIPT',
    unit: '{reload}',
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
        let reloaded = 0
        for (const store of redis) reloaded += store.scriptReloads
        result.observe(reloads, reloaded)
      }
    },
    [entries, bytes, evictions, reloads],
  )
  return {
    add(store: object, kind: StoreKind): void {
      if (kind === 'memory') memory.add(store as MemoryFigures)
      const reloaded = (store as Partial<RedisFigures>).scriptReloads
      if (kind === 'redis' && typeof reloaded === 'number') redis.add(store as RedisFigures)
    },
  }
}
