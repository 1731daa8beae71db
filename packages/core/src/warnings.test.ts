import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createReporter } from './limiter/report.js'
import { createWarnOnce, type Logger, type WarningCode } from './warnings.js'

// The two once-only warners as they were written apart: the reference each is checked against.
function codeOnceModel(options: { logger: Logger | false; ignoreWarnings?: string[] }) {
  const warned = new Set<string>(options.ignoreWarnings)
  return (code: string, message: string) => {
    if (options.logger === false || warned.has(code)) return
    warned.add(code)
    try {
      options.logger.warn(`[tollgate] ${code}: ${message}`)
    } catch {}
  }
}

function lineOnceModel(logger: Logger | false) {
  const warned = new Set<string>()
  return (code: string, message: string) => {
    const line = `[tollgate] ${code}: ${message}`
    if (logger === false || warned.has(line)) return
    if (warned.size >= 100) warned.clear()
    warned.add(line)
    try {
      logger.warn(line)
    } catch {}
  }
}

/** A logger that records every line and throws on those `throwsOn` picks. */
function recorder(throwsOn: (line: string) => boolean = () => false) {
  const lines: string[] = []
  const logger: Logger = {
    warn(line) {
      lines.push(line)
      if (throwsOn(line)) throw new Error('logger down')
    },
  }
  return { lines, logger }
}

const CODES = ['WARN_A', 'WARN_B', 'WARN_C', 'WARN_D'] as const
// Enough distinct messages that the reporter's memory of 100 lines starts over.
const calls = fc.array(
  fc.tuple(fc.constantFrom(...CODES), fc.integer({ min: 0, max: 150 }).map(String)),
  { maxLength: 600 },
)

describe('createWarnOnce: each code once', () => {
  it('reports a code once whatever its message, never an ignored one, through a logger that may throw', () => {
    fc.assert(
      fc.property(
        calls,
        fc.subarray([...CODES]),
        fc.boolean(),
        fc.integer({ min: 0, max: 200 }),
        (sequence, ignored, silent, extraIgnored) => {
          // Ignored codes beyond the known ones (a JavaScript caller) are remembered too.
          const ignoreWarnings = [
            ...ignored,
            ...Array.from({ length: extraIgnored }, (_, i) => `X${i}`),
          ]
          const actual = recorder((line) => line.includes(': 1'))
          const expected = recorder((line) => line.includes(': 1'))
          const warn = createWarnOnce({
            logger: silent ? false : actual.logger,
            ignoreWarnings: ignoreWarnings as WarningCode[],
          })
          const model = codeOnceModel({ logger: silent ? false : expected.logger, ignoreWarnings })
          for (const [code, message] of sequence) {
            expect(() => warn(code as WarningCode, message)).not.toThrow()
            model(code, message)
          }
          expect(actual.lines).toEqual(expected.lines)
        },
      ),
    )
  })
})

describe("the limiter's reporter: each distinct line once", () => {
  it('reports each distinct line once, the memory starting over past 100 lines', () => {
    fc.assert(
      fc.property(calls, fc.boolean(), (sequence, silent) => {
        const actual = recorder((line) => line.endsWith('7'))
        const expected = recorder((line) => line.endsWith('7'))
        const { warnOnce } = createReporter(silent ? false : actual.logger, undefined)
        const model = lineOnceModel(silent ? false : expected.logger)
        for (const [code, message] of sequence) {
          expect(() => warnOnce(code as 'WARN_STORE_FAILED', message)).not.toThrow()
          model(code, message)
        }
        expect(actual.lines).toEqual(expected.lines)
      }),
    )
  })

  it('forgets its first line only after 100 distinct ones', () => {
    const { lines, logger } = recorder()
    const { warnOnce } = createReporter(logger, undefined)
    for (let i = 0; i < 100; i++) warnOnce('WARN_STORE_FAILED', `m${i}`)
    warnOnce('WARN_STORE_FAILED', 'm0')
    expect(lines).toHaveLength(100)
    warnOnce('WARN_STORE_FAILED', 'm100')
    warnOnce('WARN_STORE_FAILED', 'm0')
    expect(lines.slice(100)).toEqual([
      '[tollgate] WARN_STORE_FAILED: m100',
      '[tollgate] WARN_STORE_FAILED: m0',
    ])
  })
})
