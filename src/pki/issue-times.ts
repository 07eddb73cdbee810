/** Time units of certificate lifetimes, apart from the issuer so that using them loads no X.509 library. */
export const DAY_MS = 24 * 3600 * 1000;
