export { type ManualClock, manualClock } from './manual-clock.js'
export { REDIS_URL, redisAnswers, redisForTest } from './redis.js'
export { referenceStore } from './reference-store.js'
