// The per-request creation watch against the one it replaced (old-creation-watch/, as it was
// before it was rewritten smaller), over generated runs of kits made, requests sent, time
// passing, tasks ending and clocks failing: the same warnings, at the same steps, and the same
// requests passed on.
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'

type Kit = { enter: (req: number, res: undefined) => number }

type Step =
  | { readonly kind: 'make'; readonly brokenClock: boolean; readonly ignored: boolean }
  | { readonly kind: 'send'; readonly kit: number }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'tick' }

const make = fc.record({
  kind: fc.constant('make' as const),
  brokenClock: fc.nat(79).map((n) => n === 0),
  ignored: fc.nat(29).map((n) => n === 0),
})

/** Steps in chunks, most often a kit made and sent its first request at once (made per request). */
const chunk: fc.Arbitrary<Step[]> = fc.oneof(
  { arbitrary: make.map((m): Step[] => [m, { kind: 'send', kit: -1 }]), weight: 12 },
  { arbitrary: make.map((m): Step[] => [m]), weight: 2 },
  { arbitrary: fc.nat(40).map((kit): Step[] => [{ kind: 'send', kit }]), weight: 2 },
  {
    arbitrary: fc
      .oneof(
        { arbitrary: fc.nat(8_000), weight: 10 },
        { arbitrary: fc.constantFrom(0, 1, 59_999, 60_000, 60_001), weight: 1 },
        { arbitrary: fc.integer({ min: -5_000, max: -1 }), weight: 1 },
      )
      .map((ms): Step[] => [{ kind: 'advance', ms }]),
    weight: 3,
  },
  { arbitrary: fc.constant<Step[]>([{ kind: 'tick' }]), weight: 1 },
)

type Watch = typeof import('./creation-watch.js')

/** What a run shows: the warnings (with the step they came at) and what each request returned. */
async function run(load: () => Promise<Pick<Watch, 'firstEntry'>>, steps: readonly Step[]) {
  vi.resetModules()
  const { firstEntry } = await load()
  let now = 1_000_000
  const seen: string[] = []
  const kits: Kit[] = []
  for (const [index, s] of steps.entries()) {
    if (s.kind === 'make') {
      const kit: Kit = { enter: (req) => req * 2 }
      const clock = {
        now: () => {
          if (s.brokenClock) throw new Error('broken clock')
          return now
        },
      }
      const logger = { warn: (line: string) => void seen.push(`${index}: ${line}`) }
      const options = s.ignored
        ? { clock, logger, ignoreWarnings: ['WARN_LIMITER_PER_REQUEST' as const] }
        : { clock, logger }
      kit.enter = firstEntry(kit, options)
      kits.push(kit)
    } else if (s.kind === 'send') {
      const kit = s.kit === -1 ? kits.at(-1) : kits[s.kit % Math.max(1, kits.length)]
      if (kit !== undefined) seen.push(`${index}: passed ${kit.enter(index, undefined)}`)
    } else if (s.kind === 'advance') now += s.ms
    else await Promise.resolve()
  }
  return seen
}

describe('the per-request creation watch, rewritten', () => {
  it('warns and passes requests on as the old one did', async () => {
    let warned = 0
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(chunk, { minLength: 1, maxLength: 80, size: 'max' })
          .map((chunks) => chunks.flat()),
        async (steps) => {
          const now = await run(() => import('./creation-watch.js'), steps)
          const old = await run(
            () => import('./old-creation-watch/creation-watch.test-copy.js'),
            steps,
          )
          expect(now).toEqual(old)
          if (now.some((line) => line.includes('WARN_LIMITER_PER_REQUEST'))) warned++
        },
      ),
      { numRuns: 400 },
    )
    // The comparison is only worth as much as the runs that warn.
    expect(warned).toBeGreaterThan(100)
  })

  it('warns in the generated runs that make many kits, each for one request', async () => {
    // The property above is only worth as much as the runs that warn: this one does.
    const steps: Step[] = []
    for (let i = 0; i < 12; i++) {
      steps.push({ kind: 'make', brokenClock: false, ignored: false }, { kind: 'send', kit: -1 })
    }
    const now = await run(() => import('./creation-watch.js'), steps)
    expect(now.filter((line) => line.includes('WARN_LIMITER_PER_REQUEST'))).toHaveLength(1)
    expect(now).toEqual(
      await run(() => import('./old-creation-watch/creation-watch.test-copy.js'), steps),
    )
  })
})
