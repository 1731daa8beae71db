/**
 * How a state of several numbers is stored: one binary string, a tag byte (the algorithm code)
 * then each slot as a little-endian IEEE double (Lua's `struct` library, built into Redis).
 * Every slot is a whole number below 2^53, which a double holds exactly.
 *
 * Why binary and not text: packing and unpacking are single C calls, where `string.format` and
 * `string.match` with `tonumber` cost about 1 µs of Redis CPU per request; and the value is
 * shorter (17 bytes for two slots, where `t<level>:<time>` took about 30).
 *
 * A value of another length, another tag (a rule that changed algorithm) or any other type
 * reads as no state.
 */
const layout = (slots: number) => `'<B${'d'.repeat(slots)}'`
const packedLength = (slots: number) => 1 + 8 * slots

/**
 * Lua that sets the locals named in `slots` from `v` (the stored string, or nil), or leaves the
 * first of them nil when `v` holds no state of this algorithm. With `read`, the slots were
 * already unpacked with the entry that holds them (a rule-set script's identity value, which
 * checked the tag): the locals are set from those names, and no string is made or unpacked.
 */
export function unpackState(code: number, slots: readonly string[], read?: readonly string[]) {
  const names = slots.join(', ')
  if (read !== undefined) return `local ${names} = ${read.join(', ')}`
  return `local ${names}
    if v and #v == ${packedLength(slots.length)} then
      local tag
      tag, ${names} = struct.unpack(${layout(slots.length)}, v)
      if tag ~= ${code} then ${slots[0]} = nil end
    end`
}

/** A Lua expression: the string that stores the state `s` of `slots` slots. */
export function packState(code: number, slots: number): string {
  const values = Array.from({ length: slots }, (_, i) => `s[${i + 1}]`).join(', ')
  return `struct.pack(${layout(slots)}, ${code}, ${values})`
}
