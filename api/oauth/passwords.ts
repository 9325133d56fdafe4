import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt with N = 2^15, r = 8, p = 3: OWASP's minimum (N = 2^17, r = 8, p = 1) in the equivalent form
 * that needs a quarter of the memory: 32 MiB and roughly 300 ms per hash here, since parallel sign-ins
 * each hold their own. Hashes made with other parameters still verify, and are remade with these at the
 * next right sign-in (needsRehash).
 */
const COST = { N: 2 ** 15, r: 8, p: 3 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export const PASSWORD_MIN_LENGTH = 8;
/** Long enough for any passphrase, short enough that hashing cannot be used to exhaust the server. */
export const PASSWORD_MAX_LENGTH = 1024;

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const actual = await derive(password, Buffer.from(salt, 'base64url'), cost, expected.length);
  // After, not beside it: both would run at once on the thread pool and hide nothing.
  await padWork(cost);
  return timingSafeEqual(actual, expected);
}

/**
 * Work that brings a check of a cheaper hash up to today's cost: scrypt's work grows with N × r × p, so
 * the missing part is more of p at today's N and r. Without it a wrong password for an account still on
 * an older hash would answer faster than one for an unknown e-mail (checked against today's decoy), and
 * tell which addresses have accounts.
 */
async function padWork(cost: { N: number; r: number; p: number }): Promise<void> {
  const missing = COST.N * COST.r * COST.p - cost.N * cost.r * cost.p;
  if (!(missing > 0)) return;
  await derive('', PAD_SALT, { N: COST.N, r: COST.r, p: Math.ceil(missing / (COST.N * COST.r)) }, 1);
}

const PAD_SALT = Buffer.alloc(SALT_BYTES);

/** Whether the stored hash was made with parameters other than today's: remade when its password is next known. */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) !== COST.N || Number(r) !== COST.r || Number(p) !== COST.p;
}

/** A hash of nothing anyone knows, checked when the e-mail is unknown so that timing does not tell. */
export const DECOY_PASSWORD_HASH = `scrypt$${COST.N}$${COST.r}$${COST.p}$${randomBytes(SALT_BYTES).toString('base64url')}$${randomBytes(KEY_BYTES).toString('base64url')}`;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }, length = KEY_BYTES): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, length, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}
