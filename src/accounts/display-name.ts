/** How a user is named to customers and colleagues: users have no name of their own, so their email's first word, capitalised. */
export function displayName(email: string): string {
  const word = email.split('@', 1)[0]!.split(/[._+-]/, 1)[0] ?? '';
  return word === '' ? email : word.charAt(0).toUpperCase() + word.slice(1);
}
