import { isUniqueViolation } from '../db/errors.js';
import { ApiError } from './errors.js';

/**
 * Runs `work` (a rename, usually), answering a unique violation, which means the name is already
 * another's, as 409 with `message`.
 */
export async function conflictIfNameTaken<T>(message: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('conflict', message);
    throw err;
  }
}
