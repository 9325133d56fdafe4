import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';
import { SECRETS_KEY_VARIABLE, secretKeyringFromEnv, type SecretKeyring } from './secrets-key.js';

/**
 * Secrets at rest as JWE compact serialization: `dir` with A256GCM under a key of SECRETS_KEY, whose
 * kid the protected header names, so a secret opens with the key that sealed it after a rotation.
 * The protected header also names where the secret belongs (`ctx`, e.g.
 * `provider_connections/<tenant>/<id>/api_key`); GCM authenticates it, and a secret opened for any
 * other place is unreadable, so a ciphertext copied into another row never yields its plaintext there.
 */

/** No SECRETS_KEY on this server: secrets can be neither sealed nor opened. */
export class SecretsUnavailableError extends Error {
  override readonly name = 'SecretsUnavailableError';
  constructor() {
    super(`${SECRETS_KEY_VARIABLE} is not set on this server, so it cannot store or read secrets (docs/providers.md)`);
  }
}

/** A sealed secret that no key of SECRETS_KEY opens (its key was removed, or the text was altered). */
export class SecretUnreadableError extends Error {
  override readonly name = 'SecretUnreadableError';
}

const ALG = 'dir';
const ENC = 'A256GCM';

function keyring(given: SecretKeyring | undefined): SecretKeyring {
  const found = given ?? secretKeyringFromEnv();
  if (!found) throw new SecretsUnavailableError();
  return found;
}

/** `plaintext` sealed for `context` (where it will be stored) with the first key of SECRETS_KEY (or of `given`). */
export async function sealSecret(plaintext: string, context: string, given?: SecretKeyring): Promise<string> {
  const ring = keyring(given);
  return new CompactEncrypt(new TextEncoder().encode(plaintext))
    .setProtectedHeader({ alg: ALG, enc: ENC, kid: ring.currentKid, ctx: context })
    .encrypt(ring.keys.get(ring.currentKid)!);
}

/** What `jwe` seals, opened with the key its header names; unreadable unless it was sealed for `context`. */
export async function openSecret(jwe: string, context: string, given?: SecretKeyring): Promise<string> {
  const ring = keyring(given);
  let kid: unknown;
  let ctx: unknown;
  try {
    ({ kid, ctx } = decodeProtectedHeader(jwe));
  } catch {
    throw new SecretUnreadableError('a stored secret is not a JWE');
  }
  // The header is authenticated by the decryption below, so a ctx edited to match fails there.
  if (ctx !== context) throw new SecretUnreadableError('a stored secret was sealed for another place than the one it is read from');
  const key = typeof kid === 'string' ? ring.keys.get(kid) : undefined;
  if (!key) throw new SecretUnreadableError(`a stored secret was sealed with key '${String(kid)}', which ${SECRETS_KEY_VARIABLE} no longer holds`);
  try {
    const { plaintext } = await compactDecrypt(jwe, key, { keyManagementAlgorithms: [ALG], contentEncryptionAlgorithms: [ENC] });
    return new TextDecoder().decode(plaintext);
  } catch {
    throw new SecretUnreadableError(`a stored secret does not open with key '${kid as string}' of ${SECRETS_KEY_VARIABLE}`);
  }
}
