import { ioredisClient, redisStore } from '@tollgate/redis'
import { Redis } from 'ioredis'
import { createApp } from './app.js'

const { PORT = '3000', REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
// No offline queue: while Redis is unreachable, calls fail at once and each rule's
// onStoreError decides (open: admit; closed: 503), instead of requests waiting.
const redis = new Redis(REDIS_URL, { enableOfflineQueue: false })
redis.on('error', (error) => console.error(`Redis: ${error.message}`))
const store = redisStore({ client: ioredisClient(redis), prefix: 'example' })

createApp(store).listen(Number(PORT), () => {
  console.log(`Listening on http://localhost:${PORT}, limits in Redis at ${REDIS_URL}`)
  console.log(`Try: curl -i -H 'x-api-key: k_1' localhost:${PORT}/`)
})
