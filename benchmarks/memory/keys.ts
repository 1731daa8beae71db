/** IPv4-shaped keys, as a per-IP rule sees them: `ip:10.a.b.c` for key number `i` (< 2^24). */
export function ipKey(i: number): string {
  return `ip:10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`
}

/** 0 … n − 1 in a random but reproducible order (xorshift32 Fisher–Yates). */
export function shuffledOrder(n: number, seed = 0x2545f491): Uint32Array {
  const order = new Uint32Array(n)
  for (let i = 0; i < n; i++) order[i] = i
  let state = seed | 0
  for (let i = n - 1; i > 0; i--) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    const j = (state >>> 0) % (i + 1)
    const swap = order[i]!
    order[i] = order[j]!
    order[j] = swap
  }
  return order
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
