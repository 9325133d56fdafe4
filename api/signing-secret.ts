import { SIGNING_SECRET_PATTERN, signingSecretProblem } from '../activities/standard-webhooks/secret.js';
import { invalidRequest } from './errors.js';
import type { JsonSchema } from './operation.js';

/** A Standard Webhooks secret a caller may bring (inbound channels, outbound webhooks); write-only. */
export const signingSecretSchema: JsonSchema = {
  type: 'string',
  pattern: SIGNING_SECRET_PATTERN,
  maxLength: 100,
  description: 'A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes. Write-only: stored encrypted, never returned.',
};

/** 400 on `body.secret` when the secret is not whole base64 of 24 to 64 bytes (the pattern cannot count bytes). */
export function checkSigningSecret(secret: string): void {
  const problem = signingSecretProblem(secret);
  if (problem) throw invalidRequest(`secret ${problem}`, [{ field: 'body.secret', message: problem }]);
}
