/**
 * Runtime environment names carry their version after the first dash that is
 * followed by a digit (`APPS/HEP/ATLAS-21.0.1` is AppName `APPS/HEP/ATLAS`,
 * AppVersion `21.0.1`; `ENV/PROXY` has no version), as A-REX publishes them.
 * pyarcrest rebuilds the name as `AppName-AppVersion`, so the split must be lossless.
 */
export interface AppNameVersion {
  readonly appName: string;
  readonly appVersion?: string;
}

export function splitRteName(name: string): AppNameVersion {
  const m = /^(.*?)-([0-9].*)$/s.exec(name);
  if (!m || m[1] === undefined || m[2] === undefined || m[1] === '') return { appName: name };
  return { appName: m[1], appVersion: m[2] };
}
