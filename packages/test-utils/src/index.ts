export { type ManualClock, manualClock } from './manual-clock.js'
export { referenceStore } from './reference-store.js'
