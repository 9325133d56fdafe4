import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The keys that seal secrets at rest (docs/providers.md): SECRETS_KEY is a comma-separated list of
 * `kid:key`, each key 32 random bytes in base64url. The first seals new secrets; every one opens the
 * secrets sealed with it, so a key rotates by putting the new one first and keeping the old one
 * until nothing sealed with it is left.
 */

export const SECRETS_KEY_VARIABLE = 'SECRETS_KEY';

export interface SecretKeyring {
  /** The kid new secrets are sealed with. */
  currentKid: string;
  keys: ReadonlyMap<string, Uint8Array>;
}

const KID = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_BYTES = 32;

/**
 * The keyring SECRETS_KEY describes; throws an error naming what is wrong and which entry, by position
 * only: nothing of the value is ever echoed, since a mistyped entry (key and kid swapped, a missing
 * colon) may put key material anywhere in it.
 */
export function parseSecretsKey(value: string): SecretKeyring {
  const keys = new Map<string, Uint8Array>();
  const entries = value.split(',').map((entry) => entry.trim());
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const kid = colon === -1 ? '' : entry.slice(0, colon);
    const encoded = colon === -1 ? '' : entry.slice(colon + 1);
    const where = `${SECRETS_KEY_VARIABLE}: entry ${i + 1}`;
    if (!KID.test(kid)) throw new Error(`${where} must be 'kid:key' with a kid of letters, digits, '.', '_' or '-' (at most 64)`);
    const repeated = [...keys.keys()].indexOf(kid);
    if (repeated !== -1) throw new Error(`${where} repeats the kid of entry ${repeated + 1}`);
    const key = /^[A-Za-z0-9_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64url') : Buffer.alloc(0);
    if (key.length !== KEY_BYTES) {
      throw new Error(`${where} must be ${KEY_BYTES} random bytes in base64url (43 characters), e.g. from: openssl rand -base64 32 | tr '+/' '-_' | tr -d '='`);
    }
    keys.set(kid, new Uint8Array(key));
  }
  return { currentKid: entries[0]!.slice(0, entries[0]!.indexOf(':')), keys };
}

let parsed: { value: string; keyring: SecretKeyring } | undefined;

/**
 * The keyring from SECRETS_KEY as the environment says now (read per use, so the embedded default's
 * generated key and a test's rotation take effect), or undefined when it is unset.
 */
export function secretKeyringFromEnv(env: NodeJS.ProcessEnv = process.env): SecretKeyring | undefined {
  const value = env[SECRETS_KEY_VARIABLE];
  if (!value) return undefined;
  if (parsed?.value !== value) parsed = { value, keyring: parseSecretsKey(value) };
  return parsed.keyring;
}

/** A fresh SECRETS_KEY entry: `kid:` and 32 random bytes in base64url. */
export function newSecretsKeyEntry(kid: string): string {
  return `${kid}:${randomBytes(KEY_BYTES).toString('base64url')}`;
}

export const EMBEDDED_KEY_FILE = 'secrets-key';

/**
 * The embedded default (`npm start` without DATABASE_URL) keeps its data in DATA_DIR, and so its key:
 * when SECRETS_KEY is unset, the key in DATA_DIR/secrets-key (made on the first start, readable by the
 * owner only) becomes this process's SECRETS_KEY. Answers where the key came from; `warn` hears of a
 * key file others may read.
 */
export function useEmbeddedSecretsKey(
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = (message) => console.warn(message),
): 'environment' | 'file' | 'generated' {
  if (env[SECRETS_KEY_VARIABLE]) return 'environment';
  const file = path.join(dataDir, EMBEDDED_KEY_FILE);
  let origin: 'file' | 'generated' = 'file';
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    if (createKeyFile(file)) origin = 'generated';
  }
  const mode = fs.statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    warn(`[platform] ${file} can be read by others than its owner (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 it`);
  }
  const value = fs.readFileSync(file, 'utf8').trim();
  try {
    parseSecretsKey(value);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
  env[SECRETS_KEY_VARIABLE] = value;
  return origin;
}

/**
 * Writes a new key to `file` whole or not at all: written to a temporary file first, then linked into
 * place, which fails if another start linked its own first. A concurrent start thus never reads a
 * half-written file; false when the other start won (its key is the one used).
 */
function createKeyFile(file: string): boolean {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, `${newSecretsKeyEntry('local')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temporary, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}
