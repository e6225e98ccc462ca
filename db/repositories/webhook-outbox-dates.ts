/** The outbox's times as the driver hands them over: a Date, or a string where a raw statement returns one. */

export const dateOf = (value: Date | string | null): Date | null => (value == null ? null : value instanceof Date ? value : new Date(value));
