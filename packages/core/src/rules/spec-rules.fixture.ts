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

/**
 * Spec 004's NGINX configuration as rules: `limit_req zone=per_ip burst=20 nodelay` and
 * `zone=per_key burst=50 delay=10` on /api/, `zone=per_ip burst=5` on /login, with the zones'
 * rate of 10r/s.
 */
export const NGINX_QUEUE_YAML = `
- id: api-per-ip
  match: { route: "/api/*", identity: ip }
  algorithm: leaky_queue
  rate_per_s: 10
  burst: 20
  nodelay: true        # allow short spikes, reject beyond
- id: api-per-key
  match: { route: "/api/*", identity: api_key }
  algorithm: leaky_queue
  rate_per_s: 10
  burst: 50
  delay: 10            # first 10 immediate, rest smoothed
- id: login-per-ip
  match: { route: "/login", identity: ip }
  algorithm: leaky_queue
  rate_per_s: 10
  burst: 5             # queued and delayed, never bursty
`
