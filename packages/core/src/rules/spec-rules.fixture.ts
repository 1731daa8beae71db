/** The rule examples of the spec's "Interface" section, verbatim. */
export const SPEC_YAML = `
- id: free-global
  match: { plan: free, identity: api_key }
  algorithm: token_bucket
  rate_per_s: 10
  burst: 20
- id: labels-bulk
  match: { route: "POST /v1/labels:batch", identity: api_key }
  algorithm: token_bucket
  rate_per_s: 10
  burst: 20
  cost_by_route: { "POST /v1/labels:batch": 10 }
- id: login-per-ip
  match: { route: "POST /v1/login", identity: ip }
  algorithm: sliding_log
  limit: 5             # window algorithms use limit + window_s,
  window_s: 60         # not rate_per_s + burst
`
