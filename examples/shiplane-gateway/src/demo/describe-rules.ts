import type { Rule } from '@tollgate/express'

const seconds = (ms: number) => `${ms / 1000} s`

/** One line per rule: `free-global   token_bucket  10 per 1 s, burst 20  api_key, plan free`. */
export function describeRules(rules: readonly Rule[]): string[][] {
  return rules.map((rule) => {
    const amount =
      'burst' in rule
        ? `${rule.rate} per ${seconds(rule.period)}, burst ${rule.burst}`
        : !('window' in rule)
          ? `${rule.limit} at once`
          : `${rule.limit} per ${typeof rule.window === 'number' ? seconds(rule.window) : rule.window}`
    const match = [
      `per ${rule.match.identity.join(' + ')}`,
      ...(rule.match.plan === undefined ? [] : [`plan ${rule.match.plan.join('/')}`]),
      ...(rule.match.route === undefined ? [] : [`on ${rule.match.route.join(', ')}`]),
    ]
    const costs = Object.values(rule.costByRoute).map((cost) => `cost ${cost}`)
    const extras = [...costs, ...(rule.onStoreError === 'closed' ? ['fails closed'] : [])]
    return [rule.id, rule.algorithm, amount, [...match, ...extras].join(', ')]
  })
}
