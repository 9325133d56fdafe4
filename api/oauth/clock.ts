/**
 * The authorization server's notion of "now". Every expiry (codes, tokens, sessions, rate-limit
 * windows) is computed and checked against it rather than the database's clock, so tests can move it
 * forward to expire a code or a token without waiting.
 */
export const oauthClock = {
  now: (): Date => new Date(),
};

/** `now` plus `seconds`. */
export function secondsFromNow(seconds: number): Date {
  return new Date(oauthClock.now().getTime() + seconds * 1000);
}
