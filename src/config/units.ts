/** Named units so that durations and sizes in defaults read as what they are. */
export const SECOND = 1;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const MS = 1;
export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;
