/**
 * Lines for the job's control files (A-REX formats, see
 * docs/control-directory.md): `input_status` holds `/<path>` per input present in the session;
 * `output_status` holds uploaded outputs in the `output` list format (`pfn lfn`,
 * space-separated, spaces and backslashes backslash-escaped); `statistics` one line
 * per transfer: `inputfile:url=URL,size=N,starttime=T,endtime=T[,fromcache=yes]` or
 * `outputfile:...`, times in UTC (`YYYY-MM-DDThh:mm:ssZ`). URLs are the redacted forms.
 */
export function escapeField(s: string): string {
  return s.replace(/[\\ ]/g, (c) => `\\${c}`);
}

export function sessionPath(rel: string): string {
  return `/${rel}`;
}

export function inputStatusLine(rel: string): string {
  return sessionPath(rel);
}

export function outputStatusLine(rel: string, url: string): string {
  return `${escapeField(sessionPath(rel))} ${escapeField(url)}`;
}

export function utcStamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function statisticsLine(
  kind: 'inputfile' | 'outputfile',
  url: string,
  size: number,
  start: Date,
  end: Date,
  fromCache = false,
): string {
  return `${kind}:url=${url},size=${size},starttime=${utcStamp(start)},endtime=${utcStamp(end)}${fromCache ? ',fromcache=yes' : ''}`;
}
