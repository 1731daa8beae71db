/**
 * The reference point: a hand-written token bucket (the spec's "in-process, no dependencies"
 * example) with one header. What any rate limiter costs at the very least.
 */
type Bucket = { tokens: number; updatedAt: number }

export function naiveTokenBucket(capacity: number, refillPerSec: number) {
  const buckets = new Map<string, Bucket>()
  return function take(key: string): { allowed: boolean; remaining: number; retryAfterMs: number } {
    const now = performance.now()
    const bucket = buckets.get(key) ?? { tokens: capacity, updatedAt: now }
    bucket.tokens = Math.min(
      capacity,
      bucket.tokens + ((now - bucket.updatedAt) / 1000) * refillPerSec,
    )
    bucket.updatedAt = now
    buckets.set(key, bucket)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return { allowed: true, remaining: Math.floor(bucket.tokens), retryAfterMs: 0 }
    }
    const retryAfterMs = Math.ceil(((1 - bucket.tokens) / refillPerSec) * 1000)
    return { allowed: false, remaining: 0, retryAfterMs }
  }
}
