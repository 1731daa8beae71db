/*
 * The 8-byte layout of a state of a count and a time: [level in units, time in ms] (the token
 * bucket's, and the leaky bucket's kept as the level its water leaves), [window start, count]
 * (the fixed window's, its start biased to stay positive), for the memory store's 16-byte
 * slots: two uint32 words,
 *
 *   word 0: the time's low 32 bits
 *   word 1: level × 2^11 + the time's high 11 bits
 *
 * Times are whole ms from 0 to MAX_TIME_MS = 2^42 (43 bits), so the level has 21 bits: the
 * layout holds every state of a rule whose capacity (burst × unitsPerToken) or limit is below
 * 2^21 (100 per 60 s with a burst up to 3,495; 10 per second with a burst up to 20,971; a window
 * of up to 2,097,151). Both fields are whole numbers, stored exactly; a rule with a larger
 * capacity keeps its two doubles.
 * Their 8-byte forms (store/packed-forms.ts) read and write the words inline (no call per
 * request), with these constants.
 */

/** 2^32: the time's high part is ⌊time / 2^32⌋. */
export const TWO_POW_32 = 4_294_967_296
/** 2^11: word 1 is level × TIME_HIGH + the time's high part. */
export const TIME_HIGH = 2048
/** The mask of the time's high part in word 1. */
export const TIME_HIGH_MASK = 2047
/** Capacities (in units) and window limits below this fit the layout. */
export const PACKED_CAPACITY_LIMIT = 2 ** 21
