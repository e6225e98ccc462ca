/**
 * Who an export or erasure is about (docs/privacy.md, "Export and erasure"): a full phone number, a full WhatsApp id
 * or an email, never a part of one. A number that cannot be a whole international number is a 400, since a few digits
 * would match every record that happens to contain them.
 */
import { readPhoneNumber } from '../channels/phone/phone-number.ts';
import { AppError } from '../errors.ts';
import { CUSTOMER_NUMBER_DIGITS } from './limits.ts';

export type CustomerKey = { phone: string } | { email: string } | { whatsapp_id: string };

export interface CustomerIdentity {
  /** The number's digits in E.164 without `+` (a WhatsApp id as Meta writes it); null when asked by email. */
  digits: string | null;
  /** Lower-cased; null when asked by number. */
  email: string | null;
  /** What the answer says it was asked about. */
  customer: Record<string, string>;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const WHATSAPP_ID = /^\+?[1-9][0-9]+$/;

const wholeNumber = (digits: string) => digits.length >= CUSTOMER_NUMBER_DIGITS.min && digits.length <= CUSTOMER_NUMBER_DIGITS.max;

export function readCustomerKey(key: CustomerKey): CustomerIdentity {
  if ('email' in key) {
    const email = key.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new AppError('bad_request', 'Enter a whole email address, like sam@example.org.', [{ field: 'email', message: 'not an email address' }]);
    return { digits: null, email, customer: { email } };
  }
  if ('phone' in key) {
    const phone = readPhoneNumber(key.phone);
    if (!phone || !wholeNumber(phone.slice(1))) {
      throw new AppError('bad_request', 'Enter the whole phone number with its country code, like +31 6 1234 5678.', [{ field: 'phone', message: 'not a whole international number' }]);
    }
    return { digits: phone.slice(1), email: null, customer: { phone } };
  }
  const id = key.whatsapp_id.trim();
  const digits = id.replace(/^\+/, '');
  if (!WHATSAPP_ID.test(id) || !wholeNumber(digits)) {
    throw new AppError('bad_request', "A WhatsApp id is the customer's whole number in digits, as Meta writes it, like 31612345678.", [{ field: 'whatsapp_id', message: 'not a whole WhatsApp id' }]);
  }
  return { digits, email: null, customer: { whatsapp_id: digits } };
}
