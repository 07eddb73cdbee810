/**
 * The patterns of the configuration schema, each with what it expects in words: a value
 * that does not match is refused as `expected <words>, got <value>` (src/config/load.ts)
 * rather than with the regular expression. Every `pattern` of the schema carries an
 * `errorMessage` (test/config/schema-messages.test.ts walks the schema for one without);
 * spread one of these into a `Type.String`, or give a new pattern its own words.
 */

/** A value the schema refuses, said with the words of its schema. */
export interface Worded {
  readonly pattern: string;
  readonly errorMessage: string;
}

export const HOST_PORT: Worded = {
  pattern: '^(\\[[0-9a-fA-F:.]+\\]|[^:\\s]+):[0-9]{1,5}$',
  errorMessage: 'HOST:PORT, e.g. 127.0.0.1:8443 or [::1]:8443 (an IPv6 address in brackets)',
};

export const ACCOUNT_NAME: Worded = {
  pattern: '^[A-Za-z_][A-Za-z0-9._-]{0,31}$',
  errorMessage: 'a local account name: a letter or _, then at most 31 letters, digits, ., _ or -',
};

/** Names of queues and authorization groups. */
export const SHORT_NAME: Worded = {
  pattern: '^[A-Za-z0-9._-]{1,64}$',
  errorMessage: 'a name of 1 to 64 letters, digits, ., _ or -',
};

/** A VO name as VOMS allows it (the monitoring role names VOs; src/authz/monitors.ts). */
export const VO_NAME: Worded = {
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$',
  errorMessage: 'a VO name (e.g. atlas): a letter or digit, then letters, digits, ., _ or -, at most 128',
};

export const FQAN_PREFIX: Worded = {
  pattern: '^/[^/]',
  errorMessage: 'an FQAN, starting with / (e.g. /atlas, /atlas/prod or /atlas/Role=production)',
};

export const RTE_NAME: Worded = {
  pattern: '^[A-Za-z0-9._+/-]{1,128}$',
  errorMessage: 'a runtime environment name of 1 to 128 letters, digits, ., _, +, / or -, e.g. ENV/PROXY',
};

export const JOB_NAME_PREFIX: Worded = {
  pattern: '^[A-Za-z0-9._-]+$',
  errorMessage: 'letters, digits, ., _ or - (Slurm job names are this prefix and the job id)',
};

export const PERCENT: Worded = {
  pattern: '^[0-9]+(\\.[0-9]+)?%$',
  errorMessage: 'a percentage such as "5%"',
};

export const MOUNT_POINT: Worded = {
  pattern: '^(/[A-Za-z0-9._~-]+)+$',
  errorMessage: 'a URL path such as /arex: one or more /segments of letters, digits, ., _, ~ or -',
};

export const HTTPS_PREFIX: Worded = {
  pattern: '^https://',
  errorMessage: 'an https:// URL',
};

export const ISSUER_URL: Worded = {
  pattern: '^https://[^#\\s]+$',
  errorMessage: 'an https:// URL without blanks or fragment (the `iss` claim exactly as its tokens carry it)',
};

export const ABSOLUTE_PATH: Worded = {
  pattern: '^/',
  errorMessage: 'an absolute path, starting with /',
};

export const OWNER_IDENTITY: Worded = {
  pattern: '^(/[^/]|https://[^#\\s]+#.)',
  errorMessage: "a subject DN in one-line form (/O=Site/CN=Jane Admin) or a token's <iss>#<sub>",
};

/** A Slurm partition, account or QoS name a route sets: one word, never an option. */
export const BATCH_NAME: Worded = {
  pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$',
  errorMessage: 'a batch name of 1 to 64 letters, digits, ., _ or - (not starting with . or -)',
};

/** A messaging-service project or topic (accounting.apel). */
export const AMS_NAME: Worded = {
  pattern: '^[A-Za-z0-9._-]{1,128}$',
  errorMessage: 'a messaging-service name of 1 to 128 letters, digits, ., _ or -, e.g. gLite-APEL',
};

/** A Grid Engine cell name (SGE_CELL); empty for the environment's. */
export const GE_CELL: Worded = {
  pattern: '^[A-Za-z0-9_.-]*$',
  errorMessage: 'a Grid Engine cell name of letters, digits, ., _ or - (empty: SGE_CELL of the environment)',
};

/** The prefix of Kubernetes Job names: a DNS label's start (lower case), short enough for the id after it. */
export const KUBE_NAME_PREFIX: Worded = {
  pattern: '^[a-z0-9][a-z0-9-]{0,20}$',
  errorMessage: 'a lower-case letter or digit, then at most 20 lower-case letters, digits or - (Kubernetes names)',
};

/** An environment variable name a container gets (a C identifier, as Kubernetes recommends). */
export const ENV_NAME: Worded = {
  pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
  errorMessage: 'an environment variable name: a letter or _, then letters, digits or _',
};
