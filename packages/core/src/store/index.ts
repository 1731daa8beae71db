export { applyCharges } from './apply-charges.js'
export { type MapStore, type MapStoreOptions, mapStore } from './map-store.js'
export { type MemoryStore, type MemoryStoreOptions, memoryStore } from './memory-store.js'
export type { Charge, Outcome, Store } from './types.js'
