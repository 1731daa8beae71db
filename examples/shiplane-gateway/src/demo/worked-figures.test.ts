import { expect, it } from 'vitest'
import { workedFigures } from './worked-figures.js'

it('prints the specification figures', () => {
  const text = workedFigures().join('\n')
  expect(text).toContain('t=0.0s  25 sent: 20 allowed, 5 denied; remaining 0; Retry-After 100 ms')
  expect(text).toContain('t=0.5s  8 sent: 5 allowed, 3 denied')
  expect(text).toContain('t=2.5s  1 sent: 1 allowed, 0 denied; remaining 19')
  expect(text).toMatch(/fixed window\s+admitted 200 of 200/)
  expect(text).toMatch(/sliding log\s+admitted 100 of 200/)
  expect(text).toMatch(/sliding window counter\s+admitted 116 of 200/)
  expect(text).toMatch(/token bucket \(burst 100\)\s+admitted 133 of 200/)
  expect(text).toContain('allowed, 15 left')
  expect(text).toContain('20 allowed; the 21st denied, retry in 100 ms')
  expect(text).toContain('12:00:06  denied, retry in 55000 ms')
  expect(text).toContain('12:01:01  allowed, 0 left')
})
