import { AppError } from '../../errors.ts';

/** A file Botlink cannot read: 422, with a sentence its owner understands, naming the file. */
export function unreadable(message: string): AppError {
  return new AppError('unprocessable', message, [{ field: 'file', message }]);
}
