/** @deprecated write the milliseconds (express-rate-limit plans to drop these) */
export const SECOND = 1000
/** @deprecated write the milliseconds (express-rate-limit plans to drop these) */
export const MINUTE = 60 * SECOND
/** @deprecated write the milliseconds (express-rate-limit plans to drop these) */
export const HOUR = 60 * MINUTE
/** @deprecated write the milliseconds (express-rate-limit plans to drop these) */
export const DAY = 24 * HOUR
