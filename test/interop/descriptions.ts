/**
 * The job descriptions the interop life cycle submits, each in both languages the ARC
 * client reads (xRSL and ADL; the client converts both to ADL before sending). They
 * describe the same jobs, so both languages must lead to the same observable results.
 */

export type Language = 'xrsl' | 'adl';

/** A data job: the client uploads `in.dat`; stdout, stderr and a copy of the input are kept. */
export interface DataJob {
  readonly name: string;
  readonly inputPath: string;
  readonly inputSize: number;
  readonly marker: string;
}

export const DATA_KEPT = ['copy.dat', 'err.txt', 'out.txt'] as const;

export function dataJobScript(j: DataJob): string {
  return `echo hello-${j.marker}; wc -c < in.dat; echo to-stderr-${j.marker} >&2; cp in.dat copy.dat`;
}

/** What out.txt / err.txt of a data job hold, byte for byte. */
export function dataJobStdout(inputSize: number, marker: string): string {
  return `hello-${marker}\n${inputSize}\n`;
}
export function dataJobStderr(marker: string): string {
  return `to-stderr-${marker}\n`;
}

/** Fails on its first run and succeeds on the second: the attempt counter survives the rerun. */
export const RERUN_SCRIPT = 'echo attempt >> attempts.txt; n=$(wc -l < attempts.txt); echo attempt-$n; test $n -ge 2';

export function dataJob(lang: Language, j: DataJob): string {
  const script = dataJobScript(j);
  if (lang === 'xrsl') {
    return (
      `&(jobname=${xq(j.name)})(executable="/bin/sh")(arguments="-c" ${xq(script)})` +
      `(inputfiles=("in.dat" ${xq(j.inputPath)}))(stdout="out.txt")(stderr="err.txt")` +
      `(outputfiles=("out.txt" "")("err.txt" "")("copy.dat" ""))`
    );
  }
  return adl(
    j.name,
    `<Executable><Path>/bin/sh</Path><Argument>-c</Argument><Argument>${esc(script)}</Argument></Executable><Output>out.txt</Output><Error>err.txt</Error>`,
    `<InputFile><Name>in.dat</Name><Source><URI>${esc(fileUri(j.inputPath))}</URI></Source></InputFile>` +
      DATA_KEPT.map((f) => `<OutputFile><Name>${f}</Name></OutputFile>`).join(''),
  );
}

/** `/bin/sleep <seconds>`: a job that runs until killed; `seconds` makes its process findable. */
export function sleepJob(lang: Language, name: string, seconds: number): string {
  if (lang === 'xrsl') return `&(jobname=${xq(name)})(executable="/bin/sleep")(arguments="${seconds}")`;
  return adl(name, `<Executable><Path>/bin/sleep</Path><Argument>${seconds}</Argument></Executable>`, '');
}

/** A job that fails once; `rerun` allows the restart (xRSL `rerun`, ADL `nordugrid-adl:Rerun`). */
export function rerunJob(lang: Language, name: string, rerun: number): string {
  if (lang === 'xrsl') {
    return (
      `&(jobname=${xq(name)})(executable="/bin/sh")(arguments="-c" ${xq(RERUN_SCRIPT)})(rerun=${rerun})` +
      `(stdout="out.txt")(outputfiles=("out.txt" "")("attempts.txt" ""))`
    );
  }
  return adl(
    name,
    `<Executable><Path>/bin/sh</Path><Argument>-c</Argument><Argument>${esc(RERUN_SCRIPT)}</Argument></Executable><Output>out.txt</Output>` +
      (rerun > 0 ? `<nordugrid-adl:Rerun>${rerun}</nordugrid-adl:Rerun>` : ''),
    `<OutputFile><Name>out.txt</Name></OutputFile><OutputFile><Name>attempts.txt</Name></OutputFile>`,
  );
}

function adl(name: string, application: string, staging: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<ActivityDescription xmlns="http://www.eu-emi.eu/es/2010/12/adl" xmlns:nordugrid-adl="http://www.nordugrid.org/es/2011/12/nordugrid-adl">` +
    `<ActivityIdentification><Name>${esc(name)}</Name></ActivityIdentification>` +
    `<Application>${application}</Application>` +
    (staging ? `<DataStaging>${staging}</DataStaging>` : '') +
    `</ActivityDescription>\n`
  );
}

/** xRSL string literal: double quotes, an embedded quote doubled. */
function xq(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fileUri(path: string): string {
  return `file://${path.split('/').map(encodeURIComponent).join('/')}`;
}
