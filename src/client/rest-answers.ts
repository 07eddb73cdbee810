/**
 * Reading the JSON answers of an ARC REST service, as Ceres and A-REX give them. A-REX
 * renders JSON mechanically from XML: one item comes as an object, several as an
 * array, numbers as strings, an empty collection as an empty body. Both shapes are
 * taken everywhere.
 */

export type Json = Record<string, unknown>;

/** A value that may be one item or a list of them, as a list. */
export function listOf(v: unknown): unknown[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

export function objectsOf(v: unknown): Json[] {
  return listOf(v).filter((x): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x));
}

export function textOf(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

export function textsOf(v: unknown): string[] {
  return listOf(v)
    .map(textOf)
    .filter((x): x is string => x !== undefined);
}

/** The JSON document of a body; undefined when the body is empty or not JSON. */
export function parseJson(body: string): Json | undefined {
  if (body.trim() === '') return undefined;
  try {
    const d: unknown = JSON.parse(body);
    return typeof d === 'object' && d !== null && !Array.isArray(d) ? (d as Json) : undefined;
  } catch {
    return undefined;
  }
}

export interface JobItem {
  readonly status: number;
  readonly reason: string;
  readonly id: string | undefined;
  readonly state: string | undefined;
  readonly activity: Json | undefined;
}

/** Per-item results of `POST jobs?action=...`, in answer order. */
export function jobItems(body: string): JobItem[] {
  return objectsOf(parseJson(body)?.job).map((j) => {
    const info = j.info_document;
    const activity =
      typeof info === 'object' && info !== null ? objectsOf((info as Json).ComputingActivity)[0] : undefined;
    return {
      status: Number(textOf(j['status-code']) ?? Number.NaN),
      reason: textOf(j.reason) ?? '',
      id: textOf(j.id),
      state: textOf(j.state),
      activity,
    };
  });
}

/** The `arcrest:` state of a ComputingActivity (its State list holds one per vocabulary). */
export function restStateOf(activity: Json): string | undefined {
  return textsOf(activity.State)
    .find((s) => s.startsWith('arcrest:'))
    ?.slice('arcrest:'.length);
}

export interface Share {
  readonly name: string;
  /** The queue a client names to reach this share (MappingQueue; the name without one). */
  readonly queue: string;
  /** Rules of its MappingPolicy (`vo:atlas`): the share is for those callers. */
  readonly policies: readonly string[];
  readonly servingState: string | undefined;
}

export interface ServiceInfo {
  readonly name: string | undefined;
  readonly implementation: string | undefined;
  readonly healthState: string | undefined;
  readonly servingState: string | undefined;
  readonly accessPolicies: readonly string[];
  readonly shares: readonly Share[];
}

/** What the info document (`GET rest/<v>/info`) says about the service, its shares and their policies. */
export function serviceInfo(doc: Json | undefined): ServiceInfo {
  const service = objectsOf(
    objectsOf(objectsOf(objectsOf(doc?.Domains)[0]?.AdminDomain)[0]?.Services)[0]?.ComputingService,
  )[0];
  const rest = objectsOf(service?.ComputingEndpoint).find((e) => textOf(e.InterfaceName) === 'org.nordugrid.arcrest');
  const rulesOf = (p: unknown): string[] => objectsOf(p).flatMap((x) => textsOf(x.Rule));
  return {
    name: textOf(service?.Name),
    implementation:
      rest === undefined
        ? undefined
        : [textOf(rest.ImplementationName), textOf(rest.ImplementationVersion)]
            .filter((x) => x !== undefined)
            .join(' '),
    healthState: textOf(rest?.HealthState),
    servingState: textOf(rest?.ServingState),
    accessPolicies: rulesOf(rest?.AccessPolicy),
    shares: objectsOf(service?.ComputingShare).map((s) => ({
      name: textOf(s.Name) ?? '?',
      queue: textOf(s.MappingQueue) ?? textOf(s.Name) ?? '?',
      policies: rulesOf(s.MappingPolicy),
      servingState: textOf(s.ServingState),
    })),
  };
}

/** Interface versions of a `GET rest` answer (`{"version": "1.0"}` or a list). */
export function versionsOf(body: string): string[] {
  const d = parseJson(body);
  const holder = typeof d?.versions === 'object' && d.versions !== null ? (d.versions as Json) : d;
  return textsOf(holder?.version).map((v) => v.trim());
}
