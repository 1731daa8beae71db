/** What the budget asks of a table that holds more than its share: give some back. */
export interface BudgetHolder {
  /** The bytes its arrays take now. */
  readonly bytes: number
  /** Drops entries (least recently used first) and shrinks its arrays to at most `bytes`. */
  shrinkTo(bytes: number, now: number): void
}

/**
 * The memory store's bound: bytes over all of its tables. A table may grow while the total
 * stays within the bound; beyond it, a table takes room from the largest other table as long as
 * that one stays at least as large as it becomes, so rules flooded at once end up with equal
 * shares and a rule that comes late is never starved by one that came first. A table that can
 * get nothing more evicts its own least recently used keys instead.
 */
export class ByteBudget {
  used = 0
  readonly holders = new Set<BudgetHolder>()

  constructor(readonly max: number) {}

  /**
   * Grants `holder` `bytes` more, or refuses. With `force` (a new table's first few hundred
   * bytes) the largest other table gives them up whatever its size, so the bound holds.
   */
  grant(holder: BudgetHolder, bytes: number, now: number, force = false): boolean {
    if (this.used + bytes <= this.max) {
      this.used += bytes
      return true
    }
    const short = this.used + bytes - this.max
    let victim: BudgetHolder | undefined
    for (const other of this.holders) {
      if (other === holder || other.bytes < short) continue
      if (!force && other.bytes - short < holder.bytes + bytes) continue
      if (victim === undefined || other.bytes > victim.bytes) victim = other
    }
    if (victim === undefined) return false
    victim.shrinkTo(victim.bytes - short, now)
    if (this.used + bytes > this.max) return false
    this.used += bytes
    return true
  }

  release(bytes: number): void {
    this.used -= bytes
  }
}
