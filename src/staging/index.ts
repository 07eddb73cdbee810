/** The staging adapter's public surface (what the engine and the composition root use). */
export { Stager, type StagerOptions, type StagerStats, type SlotStats, type Direction } from './stager.js';
export { FileCache, type FileCacheOptions, type CacheStats } from './cache/file-cache.js';
export { pruneSession, type PruneResult } from './session-prune.js';
export {
  anonymousCredentials,
  type Credential,
  type CredentialSource,
  type JwtCredential,
  type X509Credential,
} from './credentials.js';
export type { StagingLogger } from './logger.js';
export type {
  ControlLines,
  FileResult,
  Outcome,
  ProgressListener,
  SessionAccess,
  StageInFile,
  StageInJob,
  StageOutFile,
  StageOutJob,
  StageProgress,
  StageResult,
  TransferKind,
  UploadWatch,
} from './types.js';
export { escapeField, statisticsLine, utcStamp } from './control-lines.js';
export { schemeRegistry } from './gfal2/probe.js';
export { SchemeRegistry, type TransferPath } from './schemes.js';
export { s3KeyFileProblems, s3UrlRefusal } from './gfal2/s3-endpoints.js';
