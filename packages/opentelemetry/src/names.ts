/**
 * Instrument and attribute names, after OpenTelemetry's conventions (dotted namespaces,
 * snake_case words, units in UCUM, durations in seconds) and ASP.NET Core's
 * `aspnetcore.rate_limiting.*` instruments: one counter of decisions with the result as an
 * attribute, rather than one counter per result.
 */
export const METER_NAME = '@tollgate/opentelemetry'

/**
 * The names of the instruments the package records, for dashboards and alerts (e.g.
 * `INSTRUMENTS.decisions`).
 */
export const INSTRUMENTS = {
  decisions: 'tollgate.rate_limiting.decisions',
  charged: 'tollgate.rate_limiting.charged',
  remainingRatio: 'tollgate.rate_limiting.remaining_ratio',
  storeDuration: 'tollgate.store.operation.duration',
  storeErrors: 'tollgate.store.errors',
  clockSteps: 'tollgate.clock.steps',
  rulesUpdates: 'tollgate.rules.updates',
  queueLength: 'tollgate.queue.length',
  queueWait: 'tollgate.queue.wait.duration',
  slotsInUse: 'tollgate.concurrency.slots_in_use',
  leasesExpired: 'tollgate.concurrency.leases_expired',
  memoryEntries: 'tollgate.memory_store.entries',
  memoryBytes: 'tollgate.memory_store.size',
  memoryEvictions: 'tollgate.memory_store.evictions',
  redisScriptLoads: 'tollgate.redis_store.script_loads',
  shadowHeavyHitters: 'tollgate.shadow.heavy_hitter.count',
  shadowErrorBound: 'tollgate.shadow.heavy_hitter.error_bound',
} as const

/** Every attribute is one of a bounded set: never a client key, an IP or a path. */
export const ATTRIBUTES = {
  rule: 'tollgate.rate_limiting.rule',
  outcome: 'tollgate.rate_limiting.outcome',
  mode: 'tollgate.rate_limiting.mode',
  /** Set (true) on decisions made in-process while the shared store failed (fallbackStore). */
  degraded: 'tollgate.rate_limiting.degraded',
  storeKind: 'tollgate.store.kind',
  storeOperation: 'tollgate.store.operation',
  errorType: 'error.type',
  clockDirection: 'tollgate.clock.direction',
  updateOutcome: 'tollgate.rules.update.outcome',
  queueResult: 'tollgate.queue.result',
  rank: 'tollgate.shadow.rank',
  loadReason: 'tollgate.redis_store.load_reason',
} as const

/** Bucket bounds of the remaining ÷ limit histogram: fine near 0, where alerts look. */
export const RATIO_BOUNDARIES = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1]

/** Bucket bounds of a queue's waits, in seconds: from a millisecond to a minute. */
export const WAIT_BOUNDARIES = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]

/** Bucket bounds of store call durations, in seconds: from a memory store's µs to a slow Redis. */
export const DURATION_BOUNDARIES = [
  0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01,
  0.025, 0.05, 0.1, 0.25, 0.5, 1,
]
