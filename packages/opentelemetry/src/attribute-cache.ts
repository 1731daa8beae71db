import type { Attributes } from '@opentelemetry/api'

/** One series: its attributes, built once, and the running total counted under them. */
export type Series = { readonly attributes: Attributes; readonly index: number; value: number }

/**
 * One series per combination of three values, made on first use and reused, so that counting
 * allocates nothing. Every value is one of a bounded set (rule ids, outcomes, modes, store
 * kinds, error codes), so the cache is bounded too.
 */
export class AttributeCache {
  private readonly made = new Map<string, Map<string, Map<string, Series>>>()
  /** Every series made, for the collection callback. */
  readonly series: Series[] = []
  // The series asked for last: requests of one rule and outcome follow each other, and three
  // comparisons of the same strings are cheaper than three map look-ups.
  private lastA: string | undefined = undefined
  private lastB = ''
  private lastC = ''
  private last: Series | undefined = undefined

  constructor(private readonly build: (a: string, b: string, c: string) => Attributes) {}

  get(a: string, b: string, c: string): Series {
    if (a === this.lastA && b === this.lastB && c === this.lastC) return this.last!
    const series = this.find(a, b, c)
    this.lastA = a
    this.lastB = b
    this.lastC = c
    this.last = series
    return series
  }

  private find(a: string, b: string, c: string): Series {
    let byB = this.made.get(a)
    if (byB === undefined) {
      byB = new Map()
      this.made.set(a, byB)
    }
    let byC = byB.get(b)
    if (byC === undefined) {
      byC = new Map()
      byB.set(b, byC)
    }
    let series = byC.get(c)
    if (series === undefined) {
      series = {
        attributes: Object.freeze(this.build(a, b, c)),
        index: this.series.length,
        value: 0,
      }
      byC.set(c, series)
      this.series.push(series)
    }
    return series
  }
}
