import { arithmeticFor } from './assemble.js'
import { gcraLua } from './gcra.lua.js'
import {
  type IdentityRule,
  type IdentityState,
  readIdentityLua,
  saveIdentityStateLua,
  slotNames,
  writeIdentityLua,
} from './identity-value.js'
import { leakyQueueLua } from './leaky-queue.lua.js'
import { bindParameters, type LuaAlgorithm, splitTicks } from './lua-algorithm.js'
import { serverNowLua } from './server-time.lua.js'
import { slidingLogLua } from './sliding-log.lua.js'
import { slidingWindowLua } from './sliding-window.lua.js'

/** One rule of a rule-set script: its algorithm, its parameters, and whether it only reports. */
type RuleShape = {
  readonly algorithm: LuaAlgorithm
  /** The algorithm's scaled parameters in the order of PARAMETER_NAMES, as decimal integers. */
  readonly params: readonly string[]
  /** A shadow rule is decided and reported, but its denial never denies the request. */
  readonly shadow: boolean
  /**
   * Its field in the identity value (identity-value.ts), where its state lives with the other
   * rules' of the same identity; undefined: a key of its own.
   */
  readonly field?: number | undefined
}

/** What a rule-set script is built for: its rules, in order, and the store's clock. */
export type RuleSetShape = {
  readonly rules: readonly RuleShape[]
  /** Extra ms each key is kept (the store's `expiryMarginMs`). */
  readonly marginMs: number
  /** The Redis server's TIME decides (`true`), or the caller's `now` after each request's costs. */
  readonly serverTime: boolean
  /**
   * `'one'`: the script decides exactly one request per call (KEYS holds its keys alone), with
   * no loop around it; `'many'`: any number of requests, in order (a batch).
   */
  readonly requests: 'one' | 'many'
}

/**
 * Where each rule finds its key among a request's keys (`places`, 1-based, in rule order): the
 * rules kept in the identity value share one key, the identity's, sent once at the place of the
 * first of them; every other rule has a key of its own. `sent`: for each key a request sends,
 * the index of the rule (0-based) whose key it is. A key sent once where it was sent per rule
 * spares Redis about 1,500 instructions a request (its argument, its string in KEYS) and the
 * client its bytes.
 */
export function requestKeyPlaces(rules: readonly { readonly field?: number | undefined }[]): {
  readonly places: readonly number[]
  readonly sent: readonly number[]
} {
  const places: number[] = []
  const sent: number[] = []
  let identityPlace: number | undefined
  rules.forEach((rule, index) => {
    if (rule.field !== undefined && identityPlace !== undefined) {
      places.push(identityPlace)
      return
    }
    sent.push(index)
    places.push(sent.length)
    if (rule.field !== undefined) identityPlace = sent.length
  })
  return { places, sent }
}

/**
 * A script that decides requests which each charge the same rules, in the same order: the
 * requests a gateway makes over and over (one rule, or a fixed set such as per second and per
 * day). Everything fixed for those rules (algorithms, scaled parameters, shadow flags, the
 * expiry margin, whose clock) is written into the source as constants, so a call carries only
 * the keys, the costs and, with the caller's clock, the times. One call may decide several
 * requests, in order (the store coalesces requests made in the same turn of the event loop; see
 * coalesce.ts); with n rules:
 *
 *   KEYS = [request 1's keys, request 2's keys, …]   (one per rule, the identity's once: requestKeyPlaces)
 *   ARGV = [request 1's n costs, (its now,) request 2's n costs, (its now,) …]
 *
 * and replies `[now, then per request and rule: remaining (or -1 - remaining when denied),
 * resetAfterMs, then retryAfterMs when denied or a queue's delayMs when allowed]` (see
 * replyOf), `now` being the server's time, or 0 with the caller's clock. Each request is decided and written before the next one is read, exactly as
 * if it had its own call, and exactly as the core's `applyCharges`: a dry run of every rule; if
 * an enforcing one denies, nothing is written and the rules that would have passed are reported
 * at cost 0; otherwise every allowed charge is taken. The keys of one request must differ (the
 * store sends a request that charges one key twice to the general script).
 *
 * The fragments are the general script's, in the same order, so either script decides a request
 * identically. Here they run inline, not inside functions: a Lua closure made on every call
 * (with its upvalues, and the garbage they leave) cost about as much as the arithmetic it wraps.
 * Each rule set gets its own script (and SHA); the store bounds how many it makes (prepare.ts).
 */
export function ruleSetLua({ rules, marginMs, serverTime, requests }: RuleSetShape): string {
  const names = rules.map((rule) => rule.algorithm.name + (rule.shadow ? ' (shadow)' : ''))
  const what = requests === 'one' ? 'a request' : 'requests'
  // The helpers bound are those the script calls (arithmeticFor).
  const script = (body: string) =>
    `-- tollgate: ${what} charging ${names.join(', ')}${arithmeticFor(body)}${body}`
  const serverClock = serverNowLua('local now')
  const write = (rule: RuleShape, i: number) =>
    rule.field === undefined
      ? writeState(rule.algorithm, marginMs, serverTime)
      : saveFreshState(rule.algorithm, identityRule(rule, i)!, marginMs, serverTime)
  // The identity value's deadlines are on the server's clock (identity-value.ts).
  const expiryClock = !rules.some((rule) => rule.field !== undefined)
    ? ''
    : serverTime
      ? '\nlocal expiryNow = now'
      : `\nlocal expiryNow
do
${serverNowLua('expiryNow')}
end`
  if (rules.length === 1 && requests === 'one') {
    // The caller's clock: the request's `now` is the argument after its cost.
    const clock = serverTime ? serverClock : `local now = tonumber(ARGV[2])`
    return script(clock + expiryClock + oneRequestOneRuleBody(rules[0]!, serverTime, write))
  }
  // One request's reply has at most three integers per rule after the time: its table is made
  // with room for them (nil until set), where one grown entry by entry is resized three times
  // or more on the way (about 2,000 Redis instructions a request). A batch's grows by doubling.
  const room = requests === 'one' ? ', nil'.repeat(3 * rules.length) : ''
  const clock =
    (serverTime
      ? `${serverClock}\nlocal reply, w = { now${room} }, 1`
      : `local reply, now, w = { 0${room} }, 0, 1`) + expiryClock
  if (rules.length === 1) return script(clock + oneRuleBody(rules[0]!, serverTime, write))
  return script(clock + severalRulesBody(rules, serverTime, requests, write))
}

/**
 * One request of one rule: the body of oneRuleBody for i = 1, with no loop and no reply table
 * to fill (the request a gateway makes when nothing else of its rule set is on its way).
 */
function oneRequestOneRuleBody(
  rule: RuleShape,
  serverTime: boolean,
  write: (r: RuleShape, i: number) => string,
) {
  const { algorithm, params } = rule
  const identity = identityFields([rule])
  return `
${bindParameters(algorithm, params)}
local key, commit = KEYS[1], true
${costLua('cost', 'ARGV[1]')}${readIdentity('KEYS[1]', identity)}
local s, moved = nil, false
${loadState(rule, 1)}
local allowed, remaining, reset, retry
do${algorithm.decide}
end
-- An inspection (cost 0) writes nothing, not even a move: the core decides it on a copy.
if cost > 0 and (allowed == 1 or moved) then
  ${write(rule, 1)}
end${writeIdentity('KEYS[1]', identity)}
if allowed == 1 then return { ${serverTime ? 'now' : '0'}, remaining, reset${isQueue(rule) ? ', retry' : ''} } end
return { ${serverTime ? 'now' : '0'}, -1 - remaining, reset, retry }
`
}

/**
 * One rule: the dry run and the commit are one decision, written only if allowed (the common
 * request, so it skips the dry run's second pass).
 */
function oneRuleBody(
  rule: RuleShape,
  serverTime: boolean,
  write: (r: RuleShape, i: number) => string,
) {
  const { algorithm, params } = rule
  const identity = identityFields([rule])
  const step = serverTime ? 1 : 2
  const requestNow = serverTime ? '' : `\n  now = tonumber(ARGV[i * 2])`
  return `
${bindParameters(algorithm, params)}
for i = 1, #KEYS do
  local key, commit = KEYS[i], true
  ${costLua('cost', `ARGV[(i - 1) * ${step} + 1]`)}${requestNow}${readIdentity('key', identity)}
  local s, moved = nil, false
  ${loadState(rule, 1)}
  local allowed, remaining, reset, retry
  do${algorithm.decide}
  end
  if cost > 0 and (allowed == 1 or moved) then
    ${write(rule, 1)}
  end${writeIdentity('key', identity)}
  ${replyOf(rule, 'allowed', 'remaining', 'reset', 'retry')}
end
return reply
`
}

/**
 * Several rules: each state is loaded, every rule decided without writing (the dry run), then
 * the request is either denied (the rules that passed are decided again at cost 0) or taken
 * (each allowed rule decided again with commit, then written). Rule i's state, cost and
 * decision live in the locals s<i>, c<i> and a<i>, m<i>, e<i>, t<i>; r<i> is true when its state
 * was moved to now (a clock that stepped back), which is written whatever the decision.
 */
function severalRulesBody(
  rules: readonly RuleShape[],
  serverTime: boolean,
  requests: 'one' | 'many',
  write: (r: RuleShape, i: number) => string,
): string {
  const n = rules.length
  const identity = identityFields(rules)
  const { places, sent } = requestKeyPlaces(rules)
  // Rule i's key among the request's (requestKeyPlaces).
  const keyOf = (i: number) => `KEYS[k + ${places[i - 1]}]`
  // Every rule in the identity layout keys on the request's one identity (the store sends other
  // requests to the general script): the first one's key is the identity's.
  const identityKey = keyOf(rules.findIndex((rule) => rule.field !== undefined) + 1)
  const step = serverTime ? n : n + 1
  const each = (part: (rule: RuleShape, i: number) => string) =>
    rules.map((rule, index) => part(rule, index + 1)).join('')
  // A fragment in its own scope, with the names it expects bound to rule i's.
  const scoped = (
    rule: RuleShape,
    i: number,
    cost: string,
    commit: string,
    body: string,
    state = `s${i}`,
  ) => `
    do
      local key, s, cost, commit = ${keyOf(i)}, ${state}, ${cost}, ${commit}
      ${bindParameters(rule.algorithm, rule.params)}
      local allowed, remaining, reset, retry
      do${rule.algorithm.decide}
      end
      a${i}, m${i}, e${i}, t${i} = allowed, remaining, reset, retry${body}
    end`
  const load = (rule: RuleShape, i: number) => `
  local s${i}, r${i}
  do
    local key = ${keyOf(i)}
    ${bindParameters(rule.algorithm, rule.params)}
    local s, moved = nil, false
    ${loadState(rule, i)}
    s${i}, r${i} = s, moved
  end`
  // A rule whose decision changes nothing but its state (all but the sliding log, which may
  // write its list in place) is decided once, committing into its state s<i> after keeping
  // what it held (keep/restore): the state is then written if the request is taken, or put back
  // for the report if it is denied. The same decision as deciding again, without a second pass.
  const once = (rule: RuleShape) => rule.algorithm.code !== slidingLogLua.code
  const dryRun = (rule: RuleShape, i: number) => `
  ${costLua(`c${i}`, `ARGV[base + ${i}]`)}
  local a${i}, m${i}, e${i}, t${i}${
    once(rule)
      ? `\n  ${keep(rule, i)}${scoped(rule, i, `c${i}`, 'true', '')}`
      : scoped(rule, i, `c${i}`, 'false', '')
  }${rule.shadow ? '' : `\n  if a${i} == 0 then denied = true end`}`
  // A moved state that is not committed is written as it is, unless only inspected (cost 0).
  const writeMoved = (rule: RuleShape, i: number) => `
    if r${i} and c${i} ~= 0 then
      local key, s = ${keyOf(i)}, s${i}
      ${bindParameters(rule.algorithm, rule.params)}
      ${write(rule, i)}
    end`
  const report = (rule: RuleShape, i: number) => `
    if a${i} == 1 then${once(rule) ? `\n      ${restore(rule, i)}` : ''}${scoped(rule, i, '0', 'false', '')}
    end${writeMoved(rule, i)}`
  const take = (rule: RuleShape, i: number) => `
    if a${i} == 1 and c${i} ~= 0 then${
      once(rule)
        ? `
      local key, s = ${keyOf(i)}, s${i}
      ${bindParameters(rule.algorithm, rule.params)}
      ${write(rule, i)}`
        : scoped(
            rule,
            i,
            `c${i}`,
            'true',
            `\n      if c${i} ~= 0 and (allowed == 1 or r${i}) then\n        ${write(rule, i)}\n      end`,
          )
    }
    else${writeMoved(rule, i)}
    end`
  const replies = (rule: RuleShape, i: number) => `
  ${replyOf(rule, `a${i}`, `m${i}`, `e${i}`, `t${i}`)}`
  // One request: the loop's body once, for r = 0.
  const loop = requests === 'one' ? 'do\n  local r = 0' : `for r = 0, #KEYS / ${sent.length} - 1 do`
  return `
${loop}
  local k, base = ${sent.length === 1 ? 'r' : `r * ${sent.length}`}, r * ${step}${serverTime ? '' : `\n  now = tonumber(ARGV[base + ${n + 1}])`}${readIdentity(identityKey, identity)}${each(load)}
  local denied = false${each(dryRun)}
  if denied then${each(report)}
  else${each(take)}
  end${writeIdentity(identityKey, identity)}
${each(replies)}
end
return reply
`
}

/**
 * Lua reading a cost from ARGV into `name`: "1", nearly every charge, without the C call to
 * `tonumber` and its strtod (about 1,200 Redis instructions per rule and request).
 */
const costLua = (name: string, arg: string) =>
  `local ${name} = ${arg}
  if ${name} == '1' then ${name} = 1 else ${name} = tonumber(${name}) end`

const isQueue = (rule: RuleShape) => rule.algorithm.code === leakyQueueLua.code

/**
 * Appends one rule's decision to `reply` at `w` (the last position written): what is left
 * (`remaining` when allowed, `-1 - remaining` when denied: the sign is the verdict) and
 * resetAfterMs, then the retry time of a denied charge, or the delayMs of a queue's allowed one.
 * A request whose rules all pass (the usual one) costs two integers per rule, not four: every
 * integer in a reply costs Redis and the client about as much as a line of arithmetic.
 */
function replyOf(
  rule: RuleShape,
  allowed: string,
  remaining: string,
  reset: string,
  retry: string,
) {
  const passed = isQueue(rule)
    ? `reply[w + 1], reply[w + 2], reply[w + 3] = ${remaining}, ${reset}, ${retry}
    w = w + 3`
    : `reply[w + 1], reply[w + 2] = ${remaining}, ${reset}
    w = w + 2`
  return `if ${allowed} == 1 then
    ${passed}
  else
    reply[w + 1], reply[w + 2], reply[w + 3] = -1 - ${remaining}, ${reset}, ${retry}
    w = w + 3
  end`
}

/**
 * Lua keeping what rule `i`'s state s<i> holds before a decision commits into it: its slots in
 * locals (a table costs Redis about 1,100 instructions, three locals a tenth of that), or, for a
 * sliding window's sub-window counters (as many as its buckets, plus one), a copy of the table.
 */
function keep(rule: RuleShape, i: number): string {
  return bucketed(rule)
    ? `local o${i} = { unpack(s${i}) }`
    : `local o${i}, p${i}, q${i} = s${i}[1], s${i}[2], s${i}[3]`
}

/** Lua putting back in s<i> what keep() kept. */
function restore(rule: RuleShape, i: number): string {
  return bucketed(rule) ? `s${i} = o${i}` : `s${i}[1], s${i}[2], s${i}[3] = o${i}, p${i}, q${i}`
}

const bucketed = (rule: RuleShape) =>
  rule.algorithm.code === slidingWindowLua.code && Number(rule.params[2]) > 0

/**
 * Lua building rule `i`'s state `s` (and `moved`) with its algorithm's load, from `v`: the GET
 * reply (the key's string, false when missing, or an error table when it holds another type, a
 * rule that changed algorithm), or the identity value's entry. Every algorithm but the sliding
 * log (which tells the error of its own long form, a list) reads `v` through
 * `#v == <its length>` or `tonumber(v)`, both of which take false and a table for no state: no
 * `type` call is needed. A state whose slots were unpacked with its entry is read from them.
 */
function loadState(rule: RuleShape, i: number): string {
  const identity = identityRule(rule, i)
  if (identity === undefined) return `local v = redis.pcall('GET', key)${rule.algorithm.load()}`
  if (identity.state.kind === 'slots') {
    return `-- Its slots were unpacked with its entry.${rule.algorithm.load(slotNames(identity))}`
  }
  return `local v = v${i}${rule.algorithm.load()}`
}

/**
 * Writes the state `s` of `key` with an expiry at the moment it is fresh again (dropping it then
 * loses nothing), plus the margin; a state already fresh is deleted instead. With the server's
 * clock the deadline is absolute (agrees with TIME to the ms), relative otherwise. A sliding log
 * kept as a list was written in place: only its expiry is left to set. Numbers go to Redis as
 * text made by format('%d') (see ARITHMETIC_LUA's `format`): exact for whole numbers below
 * 2^53, and a fraction of the cost of the float printing Redis does for a number argument.
 */
function writeState(algorithm: LuaAlgorithm, marginMs: number, serverTime: boolean): string {
  const deadline = `format('%d', ${serverTime ? `fresh + ${marginMs}` : `fresh - now + ${marginMs}`})`
  const value = `local value = ${algorithm.format}
      if type(value) == 'number' then value = format('%d', value) end
      `
  const set = `redis.call('SET', key, value, '${serverTime ? 'PXAT' : 'PX'}', ${deadline})`
  const expire = `redis.call('${serverTime ? 'PEXPIREAT' : 'PEXPIRE'}', key, ${deadline})`
  const store =
    algorithm.code === slidingLogLua.code
      ? `if s[3] then\n        ${value}${set}\n      else ${expire} end`
      : value + set
  return `local fresh
    do${algorithm.freshAt}
    end
    if fresh <= now then
      redis.call('DEL', key)
    else
      ${store}
    end`
}

/** The rules kept in the identity value, and the shape of their states. */
function identityFields(rules: readonly RuleShape[]): readonly IdentityRule[] {
  return rules.flatMap((rule, index) => identityRule(rule, index + 1) ?? [])
}

/** Rule `i` as the identity value holds it; undefined when it has a key of its own. */
function identityRule(rule: RuleShape, i: number): IdentityRule | undefined {
  if (rule.field === undefined) return undefined
  return { i, field: rule.field, state: identityState(rule) }
}

function identityState({ algorithm, params }: RuleShape): IdentityState {
  const { code } = algorithm
  const [unitsPerMs, , third] = params.map(Number)
  if (code === leakyQueueLua.code) return { kind: 'number' }
  if (code === gcraLua.code && !splitTicks(unitsPerMs!, third!)) return { kind: 'number' }
  // Sub-window counters: the tag byte and a double per sub-window and one more.
  if (code === slidingWindowLua.code && third! > 0) return { kind: 'bytes', bytes: 9 + 8 * third! }
  // A packed state: the tag byte (the algorithm's code) and a double per slot (packed-state.ts).
  return { kind: 'slots', tag: code, slots: code === slidingWindowLua.code ? 3 : 2 }
}

const readIdentity = (key: string, fields: readonly IdentityRule[]) =>
  fields.length === 0 ? '' : readIdentityLua(key, fields)

const writeIdentity = (key: string, fields: readonly IdentityRule[]) =>
  fields.length === 0 ? '' : writeIdentityLua(key, fields)

/**
 * Keeps rule `rule`'s state `s` in the identity value (written once, after every rule), with the
 * deadline at which it is fresh again plus the margin.
 */
function saveFreshState(
  algorithm: LuaAlgorithm,
  rule: IdentityRule,
  marginMs: number,
  serverTime: boolean,
): string {
  return `local fresh
    do${algorithm.freshAt}
    end
    ${saveIdentityStateLua(rule, algorithm.format, marginMs, serverTime)}`
}
