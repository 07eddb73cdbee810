/**
 * The resource BDII's feed: the service renders its GLUE2 document as LDIF
 * (src/info/glue2-ldif.ts) every `infosys.ldap.updateIntervalSeconds` and replaces the
 * file `infosys.ldap.ldifFile` atomically. BDII runs its providers as its own account
 * (`openldap`), which may not open the service's database or state directory; its
 * provider (packaging/bdii/ceres-glue2-provider) only prints this file.
 *
 * Who may read it: the file is 0640, owned by the service's account, group
 * `infosys.ldap.readerGroup` (the BDII account's), in a folder 0750 of the same group.
 * The content is what anyone may read over LDAP anyway, but only the service writes it:
 * a file another account could replace would publish that account's words as the site's.
 */
import { chmod, chown, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { lookUpGroup } from '../accounts/resolve-account.js';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { renderGlue2Ldif } from '../info/glue2-ldif.js';
import type { InfoSource } from '../info/info-source.js';
import { StartError } from '../process/start-error.js';

export interface LdifPublisherOptions {
  readonly source: InfoSource;
  readonly file: string;
  readonly readerGroup: string;
  readonly intervalMs: number;
  readonly log: Logger;
}

export interface LdifPublisher {
  /** Render and write now (also done at start and on every tick). */
  publish(): Promise<void>;
  stop(): void;
}

export async function startLdifPublisher(o: LdifPublisherOptions): Promise<LdifPublisher> {
  const gid = await lookUpGroup(o.readerGroup);
  if (gid === undefined)
    throw new StartError(
      `infosys.ldap.readerGroup: no group ${o.readerGroup} (the BDII's account's group; install bdii or name its group)`,
    );
  const dir = dirname(o.file);
  try {
    await mkdir(dir, { recursive: true, mode: 0o750 });
    await chown(dir, -1, gid);
    await chmod(dir, 0o750);
  } catch (e) {
    throw new StartError(
      `infosys.ldap.ldifFile: cannot prepare ${dir} for group ${o.readerGroup}: ${(e as Error).message} (the service must be root or a member of that group)`,
      { cause: e },
    );
  }
  let reported = '';
  const publish = async (): Promise<void> => {
    const r = renderGlue2Ldif(o.source.document());
    // The same problems come back on every tick: log them when they change only.
    const problems = r.problems.join('\n');
    if (problems !== reported && problems !== '') o.log.warn({ problems: r.problems }, 'GLUE2 LDIF: values left out');
    reported = problems;
    await writeFileAtomic(o.file, r.text, { mode: 0o640, exactMode: true, gid, durable: false });
  };
  await publish();
  const timer = setInterval(() => {
    publish().catch((e: unknown) => o.log.error({ err: e, file: o.file }, 'GLUE2 LDIF not written'));
  }, o.intervalMs);
  timer.unref();
  return { publish, stop: () => clearInterval(timer) };
}
