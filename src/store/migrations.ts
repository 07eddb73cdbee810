/**
 * Numbered schema migrations, applied in order, each once, each in a transaction.
 * Append only: never edit a migration that has shipped; add a new one.
 *
 * Design of the jobs table (001):
 *  - one row per job; `state` + `pending` are the internal (grid-manager style) state,
 *    `rest_state` the derived REST state, stored so that `GET jobs?state=` and the
 *    per-owner listing are covering-index scans (owner, rest_state, id);
 *  - every state change is a compare-and-set on `version` (optimistic lock), so a
 *    transition is persisted before its effect is acknowledged and never applied twice;
 *  - `description` holds the validated JobDescription as JSON (the one parse), `raw`
 *    the description text as submitted (the `description` control file);
 *  - request flags (kill/clean/restart) are columns, not mark files: one source of truth;
 *  - `engine` is a JSON object for per-step engine data (usage, local id details, ...).
 */
import { FINAL_STATES } from '../vocabulary/job-states.js';
import { sqlStates } from './state-list.js';

export interface Migration {
  version: number;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE jobs (
  id               TEXT PRIMARY KEY,
  owner            TEXT NOT NULL,
  state            TEXT NOT NULL,
  pending          INTEGER NOT NULL DEFAULT 0,
  rest_state       TEXT NOT NULL,
  lrms_state       TEXT,
  outcome          TEXT,
  queue            TEXT NOT NULL,
  delegation_id    TEXT,
  format           TEXT NOT NULL,
  description      TEXT NOT NULL,
  raw              TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  local_id         TEXT,
  exit_code        INTEGER,
  failed_state     TEXT,
  failed_cause     TEXT,
  failure_reason   TEXT,
  kill_requested   INTEGER NOT NULL DEFAULT 0,
  clean_requested  INTEGER NOT NULL DEFAULT 0,
  restart_requested INTEGER NOT NULL DEFAULT 0,
  reruns_left      INTEGER NOT NULL DEFAULT 0,
  started_at       INTEGER,
  ended_at         INTEGER,
  erase_at         INTEGER,
  client_host      TEXT,
  engine           TEXT NOT NULL DEFAULT '{}',
  version          INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX jobs_owner_rest ON jobs (owner, rest_state, id);
CREATE INDEX jobs_state ON jobs (state, pending);
CREATE INDEX jobs_erase ON jobs (erase_at) WHERE erase_at IS NOT NULL;
CREATE TABLE job_delegations (
  job_id        TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  delegation_id TEXT NOT NULL,
  PRIMARY KEY (job_id, delegation_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX job_delegations_by_delegation ON job_delegations (delegation_id);
`,
  },
  {
    // Delegations (src/delegations/): metadata here, key material in files under
    // <state>/delegations/. A row names its current credential file (`cred_file`) and
    // the key file of an outstanding certificate request (`req_file`); a file is live
    // only while a row names it, so the row update is the commit point of every store.
    version: 2,
    sql: `
CREATE TABLE delegations (
  id              TEXT PRIMARY KEY,
  owner           TEXT NOT NULL,
  type            TEXT NOT NULL CHECK (type IN ('x509', 'jwt')),
  cred_file       TEXT,
  expires_at      INTEGER,
  req_file        TEXT,
  req_expires_at  INTEGER,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  version         INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX delegations_owner ON delegations (owner, type, id);
CREATE INDEX delegations_expiry ON delegations (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX delegations_request_expiry ON delegations (req_expires_at) WHERE req_expires_at IS NOT NULL;
`,
  },
  {
    // Bulk `action=status` looks up (id, owner) -> rest_state for up to thousands of ids
    // per request: a covering index answers each from one small B-tree, without the
    // second lookup into the wide table row (description JSON and text live there).
    version: 3,
    sql: `
CREATE INDEX jobs_id_owner_rest ON jobs (id, owner, rest_state);
`,
  },
  {
    // Bulk status is now answered from memory (job-index.ts); the covering index of
    // version 3 only cost every insert and state change a second B-tree write.
    version: 4,
    sql: `
DROP INDEX IF EXISTS jobs_id_owner_rest;
`,
  },
  {
    // The identity (`<dev>:<ino>`) of the session directory made at submission: every
    // access checks that the directory at the job's path is still that one, so a job
    // that replaces it (link, other directory) cannot point the service elsewhere
    // (src/sessions/session-dirs.ts). NULL for jobs stored before: links are still
    // refused for them, but another real directory in their place cannot be told.
    version: 5,
    sql: `
ALTER TABLE jobs ADD COLUMN session_ident TEXT;
`,
  },
  {
    // Authorization and account mapping (src/authz/): the local account a job was mapped
    // to and the caller's verified VOMS FQANs (JSON array) at submission, both NULL when
    // not configured / not presented; and the pool-account leases, one account per DN,
    // kept across restarts. The partial index answers "does a job of this account still
    // hold a session directory" when a lease is about to be released.
    version: 6,
    sql: `
ALTER TABLE jobs ADD COLUMN local_account TEXT;
ALTER TABLE jobs ADD COLUMN fqans TEXT;
CREATE INDEX jobs_local_account ON jobs (local_account, rest_state) WHERE local_account IS NOT NULL;
CREATE TABLE account_leases (
  account    TEXT PRIMARY KEY,
  dn         TEXT NOT NULL,
  leased_at  INTEGER NOT NULL,
  last_used  INTEGER NOT NULL
) STRICT;
CREATE INDEX account_leases_dn ON account_leases (dn);
`,
  },
  {
    // Operations (src/admin, src/accounting):
    //  - accounting_records: one row per run of a job that reached a final state, keyed
    //    by (job id, end time) so writing it again (a retry, a restart of the service
    //    between the final transition and the write) changes nothing, while a restarted
    //    job's later run gets its own row. No foreign key: records outlive the job's
    //    clean and wipe by design.
    //  - admin_requests: actions an administrator asked for from the command line
    //    (kill/clean/restart a job, revoke a delegation) that only the running engine
    //    may carry out; the service polls for rows with no result yet.
    //  - drains: '' drains the whole service, a queue name that queue; kept across restarts.
    version: 7,
    sql: `
CREATE TABLE accounting_records (
  job_id            TEXT NOT NULL,
  ended_at          INTEGER NOT NULL,
  local_id          TEXT,
  endpoint          TEXT NOT NULL,
  queue             TEXT NOT NULL,
  owner             TEXT NOT NULL,
  vo                TEXT,
  fqans             TEXT NOT NULL DEFAULT '[]',
  local_account     TEXT,
  final_state       TEXT NOT NULL,
  exit_code         INTEGER,
  submitted_at      INTEGER NOT NULL,
  started_at        INTEGER,
  wall_seconds      REAL,
  user_cpu_seconds  REAL,
  system_cpu_seconds REAL,
  cores             INTEGER NOT NULL,
  nodes             TEXT NOT NULL DEFAULT '[]',
  max_rss_bytes     INTEGER,
  stage_in_bytes    INTEGER NOT NULL DEFAULT 0,
  stage_out_bytes   INTEGER NOT NULL DEFAULT 0,
  runtime_envs      TEXT NOT NULL DEFAULT '[]',
  recorded_at       INTEGER NOT NULL,
  PRIMARY KEY (job_id, ended_at)
) STRICT;
CREATE INDEX accounting_records_end ON accounting_records (ended_at);
CREATE TABLE admin_requests (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  action        TEXT NOT NULL CHECK (action IN ('kill', 'clean', 'restart', 'revoke-delegation')),
  target        TEXT NOT NULL,
  requested_by  TEXT NOT NULL,
  requested_at  INTEGER NOT NULL,
  done_at       INTEGER,
  status        INTEGER,
  reason        TEXT
) STRICT;
CREATE INDEX admin_requests_open ON admin_requests (id) WHERE done_at IS NULL;
CREATE TABLE drains (
  queue   TEXT PRIMARY KEY,
  reason  TEXT NOT NULL,
  since   INTEGER NOT NULL,
  by      TEXT NOT NULL
) STRICT;
`,
  },
  {
    // The web interface's job list (src/api/web): a user's jobs newest first, paged by
    // key (created_at, id) so the thousandth page costs what the first does.
    version: 8,
    sql: `
CREATE INDEX jobs_owner_created ON jobs (owner, created_at, id);
`,
  },
  {
    // The web interface's administrator list (every owner's jobs, newest first, paged
    // by key). Without it a page is a scan and sort of the whole table (about 60 ms at
    // 100,000 jobs, every 3 s while the list is open, blocking the event loop). Written
    // only when a job is inserted or purged, never by a state change (neither column
    // changes), and at the B-tree's right edge since created_at grows.
    version: 9,
    sql: `
CREATE INDEX jobs_created ON jobs (created_at, id);
`,
  },
  {
    // When the job entered its current position (job-fields.ts stateEnteredAt): the
    // time-in-state histogram reads it from the record instead of keeping an entry per
    // job in progress in memory, and a job resumed after a restart is timed from its
    // stored entry. Null for the jobs already stored: they are timed as before.
    version: 10,
    sql: `
ALTER TABLE jobs ADD COLUMN state_entered_at INTEGER;
`,
  },
  {
    // Which figures of an accounting record only the job itself reported (a JSON list of
    // usage-figures.ts names): under Slurm without slurmdbd the CPU time and memory come
    // from the job wrapper, which runs as the job's account (docs/security.md). '[]' for
    // the records stored before: they were written without telling.
    version: 11,
    sql: `
ALTER TABLE accounting_records ADD COLUMN job_reported TEXT NOT NULL DEFAULT '[]';
`,
  },
  {
    // Owners keyed on the unambiguous subject (src/pki/rfc4514.ts): a one-line DN can be
    // byte-equal for two certificates (`O=X/OU=Y` as one value), so `owner` of jobs and
    // delegations and `dn` of pool leases now hold the RFC 4514 form, and the one-line
    // form moves to `owner_dn` for display and accounting. A stored one-line DN converts
    // exactly to the key its certificate gives; a bearer token's `<iss>#<sub>` stays;
    // a value that is no one-line DN stays as it is, which no caller's key can equal
    // (ceres_owner_key, registered by database.ts before migrating).
    version: 12,
    sql: `
ALTER TABLE jobs ADD COLUMN owner_dn TEXT NOT NULL DEFAULT '';
UPDATE jobs SET owner_dn = owner, owner = ceres_owner_key(owner);
UPDATE delegations SET owner = ceres_owner_key(owner);
UPDATE account_leases SET dn = ceres_owner_key(dn);
`,
  },
  {
    // Accounting sent to APEL (src/accounting/apel-outbox.ts): the messages built for the
    // messaging service, each a row of apel_outbox until the service acknowledged it
    // (sent_at set, body dropped), and on each accounting record the message that carries
    // it (NULL: not yet put in a message). A record counts as sent when its message is
    // sent: the mark follows the acknowledgement, never precedes it. The partial indexes
    // keep "what is left to queue" and "what is left to send" reads short however many
    // records were sent before.
    version: 13,
    sql: `
ALTER TABLE accounting_records ADD COLUMN apel_message INTEGER;
CREATE INDEX accounting_records_apel_unqueued ON accounting_records (ended_at, job_id) WHERE apel_message IS NULL;
CREATE TABLE apel_outbox (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  kind        TEXT NOT NULL,
  body        TEXT,
  records     INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  sent_at     INTEGER,
  message_id  TEXT,
  attempts    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT
) STRICT;
CREATE INDEX apel_outbox_unsent ON apel_outbox (id) WHERE sent_at IS NULL;
`,
  },
  {
    // The route a job took (job-fields.ts route): null for the jobs stored before routes.
    version: 14,
    sql: `
ALTER TABLE jobs ADD COLUMN route TEXT;
`,
  },
  {
    // The durable job event sequence (job-events.ts): one row per change of a job's REST
    // state, written by triggers, so the event is in the very statement (and transaction)
    // that stores the transition: a crash keeps both or neither, whichever code path
    // changed the row. AUTOINCREMENT: a pruned sequence number is never given out again,
    // even when retention empties the table, so a client's resume point stays exact.
    // exit_code and failure_reason are the row's at the change; the reader shows them
    // for ended states only. No foreign key: a job's events outlive its record until
    // retention prunes them (a follower learns how the job ended).
    version: 15,
    sql: `
CREATE TABLE job_events (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id         TEXT NOT NULL,
  owner          TEXT NOT NULL,
  state          TEXT NOT NULL,
  previous_state TEXT,
  at             INTEGER NOT NULL,
  exit_code      INTEGER,
  failure_reason TEXT
) STRICT;
CREATE INDEX job_events_owner ON job_events (owner, seq);
CREATE INDEX job_events_at ON job_events (at);
CREATE TRIGGER job_events_on_insert AFTER INSERT ON jobs
BEGIN
  INSERT INTO job_events (job_id, owner, state, previous_state, at, exit_code, failure_reason)
  VALUES (new.id, new.owner, new.rest_state, NULL, new.updated_at, new.exit_code, new.failure_reason);
END;
CREATE TRIGGER job_events_on_update AFTER UPDATE OF rest_state ON jobs
WHEN new.rest_state IS NOT old.rest_state
BEGIN
  INSERT INTO job_events (job_id, owner, state, previous_state, at, exit_code, failure_reason)
  VALUES (new.id, new.owner, new.rest_state, old.rest_state, new.updated_at, new.exit_code, new.failure_reason);
END;
`,
  },
  {
    // The web interface's job list (job-pages.ts): the job's name (the description's
    // jobname/Name, '' when it has none), filled in for the jobs stored before, and one
    // index per order the list offers, for one owner and for every owner (administrators),
    // so a page walks its index in order and never sorts. A job not ended sorts as ended
    // at 0 (the same expression as the query's: SQLite matches expression indexes exactly).
    version: 16,
    sql: `
ALTER TABLE jobs ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE jobs SET name = json_extract(description, '$.jobName')
  WHERE json_valid(description) AND json_type(description, '$.jobName') = 'text';
CREATE INDEX jobs_owner_ended ON jobs (owner, ifnull(ended_at, 0), id);
CREATE INDEX jobs_ended ON jobs (ifnull(ended_at, 0), id);
CREATE INDEX jobs_owner_name ON jobs (owner, name, id);
CREATE INDEX jobs_name ON jobs (name, id);
`,
  },
  {
    // The web's browser rule for VO members (src/store/voms-seen.ts): when an identity last
    // authenticated with a verified VOMS attribute certificate holding each FQAN. One row
    // per (owner, FQAN), replaced when seen again; rows past the window are pruned.
    version: 17,
    sql: `
CREATE TABLE voms_seen (
  owner   TEXT NOT NULL,
  fqan    TEXT NOT NULL,
  seen_at INTEGER NOT NULL,
  PRIMARY KEY (owner, fqan)
) STRICT, WITHOUT ROWID;
CREATE INDEX voms_seen_at ON voms_seen (seen_at);
`,
  },
  {
    // The jobs of a route by state (job-store.ts routeCounts): a route's waiting limits at
    // submission and why a job waits read the jobs of one route, not every job. Only
    // routed jobs have entries; the expression is the queries' own (SQLite matches
    // expression indexes exactly).
    version: 18,
    sql: `
CREATE INDEX jobs_route_state ON jobs (json_extract(route, '$.name'), state) WHERE route IS NOT NULL;
`,
  },
  {
    // The batch system's own reason a job is not running yet (job-fields.ts batchReason).
    version: 19,
    sql: `
ALTER TABLE jobs ADD COLUMN batch_reason TEXT;
`,
  },
  {
    // GET jobs with filters and cursor paging, and the monitoring role (src/store/job-list.ts,
    // docs/compatibility.md). A page walks an index in id order from the cursor, so the
    // thousandth page costs what the first does: (owner, id) for a user's list, (vo, id)
    // for a VO's list as its monitors see it. `vo` is the job's VO: that of its first FQAN
    // (`/atlas/prod/Role=x` -> `atlas`; a token's first `wlcg.groups` entry, recorded as
    // FQANs), NULL without one. Computed from `fqans` (never written, so no code path can
    // store a job whose VO disagrees with its FQANs) and VIRTUAL (the only kind ALTER
    // TABLE may add; the index keeps it). Each event carries its job's VO too (the
    // triggers are remade with it), so a monitor's stream and `since=` read their own
    // index; the events kept from before get the VO of their job where it is still stored.
    version: 20,
    sql: `
ALTER TABLE jobs ADD COLUMN vo TEXT GENERATED ALWAYS AS (
  CASE WHEN json_valid(fqans) AND json_type(fqans, '$[0]') = 'text' AND substr(json_extract(fqans, '$[0]'), 1, 1) = '/'
  THEN nullif(substr(substr(json_extract(fqans, '$[0]'), 2) || '/', 1, instr(substr(json_extract(fqans, '$[0]'), 2) || '/', '/') - 1), '')
  END) VIRTUAL;
CREATE INDEX jobs_owner_id ON jobs (owner, id);
CREATE INDEX jobs_vo ON jobs (vo, id) WHERE vo IS NOT NULL;
ALTER TABLE job_events ADD COLUMN vo TEXT;
UPDATE job_events SET vo = (SELECT jobs.vo FROM jobs WHERE jobs.id = job_events.job_id);
CREATE INDEX job_events_vo ON job_events (vo, seq) WHERE vo IS NOT NULL;
DROP TRIGGER job_events_on_insert;
DROP TRIGGER job_events_on_update;
CREATE TRIGGER job_events_on_insert AFTER INSERT ON jobs
BEGIN
  INSERT INTO job_events (job_id, owner, state, previous_state, at, exit_code, failure_reason, vo)
  VALUES (new.id, new.owner, new.rest_state, NULL, new.updated_at, new.exit_code, new.failure_reason, new.vo);
END;
CREATE TRIGGER job_events_on_update AFTER UPDATE OF rest_state ON jobs
WHEN new.rest_state IS NOT old.rest_state
BEGIN
  INSERT INTO job_events (job_id, owner, state, previous_state, at, exit_code, failure_reason, vo)
  VALUES (new.id, new.owner, new.rest_state, old.rest_state, new.updated_at, new.exit_code, new.failure_reason, new.vo);
END;
`,
  },
  {
    // The site's load over time (site-series.ts): one row per bucket (5-minute and hourly),
    // its sums as a small JSON record (site-buckets.ts), and the last job event counted into
    // it, where the counting resumes after a restart. At most 576 + 1440 rows are kept.
    version: 21,
    sql: `
CREATE TABLE site_series (
  resolution INTEGER NOT NULL,
  start      INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (resolution, start)
) STRICT, WITHOUT ROWID;
CREATE INDEX jobs_active_counts ON jobs (state, pending, lrms_state, queue, rest_state, route, fqans)
  WHERE state NOT IN (${sqlStates(FINAL_STATES)});
`,
  },
];
