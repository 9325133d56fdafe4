/** How long each OAuth artifact lives, in seconds. */
export const LIFETIMES = {
  /** Authorization codes: exchanged at once by a working client (RFC 6749 suggests at most 10 minutes). */
  code: 60,
  accessToken: 60 * 60,
  /** Each refresh token; rotation issues a fresh one, so a grant lives while it is used at least monthly. */
  refreshToken: 30 * 24 * 60 * 60,
  /** The consent page's sign-in session. */
  session: 12 * 60 * 60,
} as const;
