import { describe, expect, it } from 'vitest'
import { eventLoopDelay } from './event-loop-delay.js'

describe('eventLoopDelay', () => {
  it('reads Node’s event-loop delay, in ms, since the last read', () => {
    const read = eventLoopDelay({ resolutionMs: 1 })
    for (let i = 0; i < 3; i++) {
      const delay = read()
      expect(Number.isFinite(delay)).toBe(true)
      expect(delay).toBeGreaterThanOrEqual(0)
    }
  })
})
