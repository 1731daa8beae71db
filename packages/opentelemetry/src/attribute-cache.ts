import type { Attributes } from '@opentelemetry/api'

/**
 * Attribute objects built once per combination of three values and reused, so that recording
 * allocates nothing. Every value is one of a bounded set (rule ids, outcomes, modes, store
 * kinds, error codes), so the cache is bounded too.
 */
export class AttributeCache {
  private readonly made = new Map<string, Map<string, Map<string, Attributes>>>()

  constructor(private readonly build: (a: string, b: string, c: string) => Attributes) {}

  get(a: string, b: string, c: string): Attributes {
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
    let attributes = byC.get(c)
    if (attributes === undefined) {
      attributes = Object.freeze(this.build(a, b, c))
      byC.set(c, attributes)
    }
    return attributes
  }
}
