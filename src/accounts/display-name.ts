/**
 * How a user is named to customers and colleagues (docs/interfaces.md, "Going live"): the name they were given or gave
 * themselves (migration 0036), else their email's first word, capitalised. The one rule every place that names a
 * user follows: the widget's "Sam, from the team", the line that a colleague joined, notes and their mentions,
 * presence, the holder and the assignee of a conversation.
 */
import { AppError } from '../errors.ts';
import { MAX_USER_NAME_CHARS } from '../limits.ts';

/** A user as far as naming goes: `name` null or absent when none was given. */
export interface NamedUser {
  email: string;
  name?: string | null;
}

/** The first word of the email before the @, capitalised: "sam.jansen@…" → "Sam". */
export function nameFromEmail(email: string): string {
  const word = email.split('@', 1)[0]!.split(/[._+-]/, 1)[0] ?? '';
  return word === '' ? email : word.charAt(0).toUpperCase() + word.slice(1);
}

/** The user's name as colleagues and customers see it. */
export function displayName(user: NamedUser): string {
  return user.name || nameFromEmail(user.email);
}

/**
 * A name as written in a form or a request, as stored: white space collapsed and trimmed, null when nothing is left
 * (empty means none); longer than MAX_USER_NAME_CHARS is a 400 naming `field`.
 */
export function readUserName(value: string | null | undefined, field = 'name'): string | null {
  // Control characters (a NUL no database column takes, a line break) are white space here.
  const name = (value ?? '').replace(/[\s\p{Cc}]+/gu, ' ').trim();
  if (name === '') return null;
  if (Array.from(name).length > MAX_USER_NAME_CHARS) {
    const message = `A name has at most ${MAX_USER_NAME_CHARS} characters.`;
    throw new AppError('validation_failed', message, [{ field, message }]);
  }
  return name;
}
