export { bundleWorker, COMPATIBILITY_DATE } from './bundle-worker.js'
export { type ManualClock, manualClock } from './manual-clock.js'
export { REDIS_URL, redisAnswers, redisForTest } from './redis.js'
export { referenceStore } from './reference-store.js'
