import { SecretsUnavailableError } from '../activities/secrets/secret-box.js';
import { ApiError } from './errors.js';

/**
 * Runs `seal` (work that encrypts secrets at rest) and answers 503 `unavailable` when this server has no
 * SECRETS_KEY to do it with: the request was fine, the server cannot store `what`.
 */
export async function sealingOr503<T>(what: string, seal: () => Promise<T>): Promise<T> {
  try {
    return await seal();
  } catch (err) {
    if (err instanceof SecretsUnavailableError) throw new ApiError('unavailable', `this server cannot store ${what}: ${err.message}`);
    throw err;
  }
}
