/**
 * HTTP-date (RFC 9110 §5.6.7) in its three forms, which recipients must all accept:
 * IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 form
 * `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`. Parsed by pattern,
 * not by `Date.parse`, whose leniency differs between engines. The day name is not checked.
 */
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

const IMF_FIXDATE = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/
const RFC_850 = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ( \d|\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/

/** Milliseconds since the epoch, or undefined when `text` is no valid HTTP-date. */
export function parseHttpDate(text: string, now: number): number | undefined {
  const value = text.trim().toLowerCase()
  let match = IMF_FIXDATE.exec(value)
  if (match !== null) return utc(match[3]!, match[2]!, match[1]!, match[4]!, match[5]!, match[6]!)
  match = ASCTIME.exec(value)
  if (match !== null) return utc(match[6]!, match[1]!, match[2]!, match[3]!, match[4]!, match[5]!)
  match = RFC_850.exec(value)
  if (match === null) return undefined
  return utc(fullYear(Number(match[3]), now), match[2]!, match[1]!, match[4]!, match[5]!, match[6]!)
}

/**
 * RFC 9110: a two-digit year that would be more than 50 years in the future is in the past
 * century.
 */
function fullYear(twoDigits: number, now: number): string {
  const thisYear = Number.isFinite(now) ? new Date(now).getUTCFullYear() : 2000
  let year = Math.floor(thisYear / 100) * 100 + twoDigits
  if (year > thisYear + 50) year -= 100
  return String(year)
}

function utc(
  yearText: string,
  monthName: string,
  dayText: string,
  hourText: string,
  minuteText: string,
  secondText: string,
): number | undefined {
  const month = MONTHS.indexOf(monthName)
  const [year, day, hour, minute] = [yearText, dayText, hourText, minuteText].map(Number)
  // A leap second (60) is read as the next second.
  const second = Number(secondText)
  if (month < 0 || hour! > 23 || minute! > 59 || second > 60) return undefined
  const time = Date.UTC(year!, month, day!, hour!, minute!, second)
  // Date.UTC rolls 31 Feb over into March: such a date is no date.
  const date = new Date(Date.UTC(year!, month, day!))
  if (date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined
  return time
}
