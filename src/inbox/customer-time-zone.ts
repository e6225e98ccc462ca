/**
 * The customer's time zone for the panel beside a conversation (docs/architecture.md, "Who handles a conversation":
 * the customer panel): the browser's, when the widget sent one, else the one of a phone number's country when the
 * country has one time zone. A country that spans several (the United States and Canada, Russia, Brazil, Australia,
 * Mexico, Indonesia, …) gives none: a wrong local time is worse than none.
 */
import { MAX_TIME_ZONE_CHARS, TIME_ZONE_PATTERN } from './limits.ts';

/** Calling codes (ITU-T E.164) of countries with one time zone, to its IANA name. */
const ZONE_OF_CALLING_CODE: Readonly<Record<string, string>> = {
  '20': 'Africa/Cairo', '27': 'Africa/Johannesburg', '30': 'Europe/Athens', '31': 'Europe/Amsterdam', '32': 'Europe/Brussels',
  '33': 'Europe/Paris', '34': 'Europe/Madrid', '36': 'Europe/Budapest', '39': 'Europe/Rome', '40': 'Europe/Bucharest',
  '41': 'Europe/Zurich', '43': 'Europe/Vienna', '44': 'Europe/London', '45': 'Europe/Copenhagen', '46': 'Europe/Stockholm',
  '47': 'Europe/Oslo', '48': 'Europe/Warsaw', '49': 'Europe/Berlin', '51': 'America/Lima', '53': 'America/Havana',
  '54': 'America/Argentina/Buenos_Aires', '56': 'America/Santiago', '57': 'America/Bogota', '58': 'America/Caracas',
  '60': 'Asia/Kuala_Lumpur', '63': 'Asia/Manila', '64': 'Pacific/Auckland', '65': 'Asia/Singapore', '66': 'Asia/Bangkok',
  '81': 'Asia/Tokyo', '82': 'Asia/Seoul', '84': 'Asia/Ho_Chi_Minh', '86': 'Asia/Shanghai', '90': 'Europe/Istanbul',
  '91': 'Asia/Kolkata', '92': 'Asia/Karachi', '94': 'Asia/Colombo', '212': 'Africa/Casablanca', '216': 'Africa/Tunis',
  '233': 'Africa/Accra', '234': 'Africa/Lagos', '254': 'Africa/Nairobi', '297': 'America/Aruba', '351': 'Europe/Lisbon',
  '352': 'Europe/Luxembourg', '353': 'Europe/Dublin', '354': 'Atlantic/Reykjavik', '356': 'Europe/Malta', '357': 'Asia/Nicosia',
  '358': 'Europe/Helsinki', '359': 'Europe/Sofia', '370': 'Europe/Vilnius', '371': 'Europe/Riga', '372': 'Europe/Tallinn',
  '380': 'Europe/Kyiv', '385': 'Europe/Zagreb', '386': 'Europe/Ljubljana', '420': 'Europe/Prague', '421': 'Europe/Bratislava',
  '597': 'America/Paramaribo', '599': 'America/Curacao', '852': 'Asia/Hong_Kong', '886': 'Asia/Taipei', '966': 'Asia/Riyadh',
  '971': 'Asia/Dubai', '972': 'Asia/Jerusalem', '974': 'Asia/Qatar',
};

/** The time zone of an international number's country (its E.164 digits), or null when the country has several or is unknown. */
export function timeZoneOfNumber(digits: string | null): string | null {
  if (!digits) return null;
  // Calling codes are prefix-free: at most one of the 1-, 2- and 3-digit prefixes is a code.
  for (const length of [3, 2, 1]) {
    const zone = ZONE_OF_CALLING_CODE[digits.slice(0, length)];
    if (zone) return zone;
  }
  return null;
}

const TIME_ZONE = new RegExp(TIME_ZONE_PATTERN);

/** Whether `name` is an IANA time zone this runtime knows (`Europe/Amsterdam`, `UTC`); links are accepted too. */
export function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > MAX_TIME_ZONE_CHARS || !TIME_ZONE.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * A number as its international digits (E.164 without `+`) when it is written internationally (`+31 6…`, `0031 6…`,
 * or a WhatsApp id); null for a national number (`06…`), which names no country.
 */
export function internationalDigits(number: string | null, whatsappId = false): string | null {
  if (!number) return null;
  const trimmed = number.trim();
  const digits = trimmed.replace(/\(0\)/g, '').replace(/[^0-9]/g, '');
  if (trimmed.startsWith('+')) return digits.length >= 7 ? digits : null;
  if (digits.startsWith('00')) return digits.length >= 9 ? digits.slice(2) : null;
  return whatsappId && digits.length >= 7 ? digits : null;
}
