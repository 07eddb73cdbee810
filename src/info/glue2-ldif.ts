/**
 * The LDAP rendering of the GLUE2 service document: the same `InfoRoot` tree that
 * `GET {base}/info` renders as XML or JSON (info-document.ts), written as LDIF for a
 * resource BDII. One model, two renderings: nothing here reads configuration or
 * figures; it maps elements to entries.
 *
 * The tree (what `archery-manage`, the ARC client's LDAP GLUE2 plugin and a site BDII
 * read; a site BDII aggregates `GLUE2GroupID=resource,o=glue` of each resource BDII):
 *
 *   o=glue
 *     GLUE2GroupID=resource,o=glue
 *       GLUE2DomainID=<admin domain>            (AdminDomain)
 *       GLUE2ServiceID=<service>                (ComputingService)
 *         GLUE2EndpointID=<endpoint>            (every ComputingEndpoint)
 *           GLUE2PolicyID=<access policy>       (its AccessPolicy)
 *         GLUE2ShareID=<share>                  (every ComputingShare)
 *           GLUE2PolicyID=<mapping policy>      (its MappingPolicy)
 *         GLUE2ManagerID=<manager>              (ComputingManager)
 *           GLUE2GroupID=ExecutionEnvironments  -> GLUE2ResourceID=<execution environment>
 *           GLUE2GroupID=ApplicationEnvironments -> GLUE2ApplicationEnvironmentID=<RTE>
 *
 * Attribute names follow the LDAP schema's rule: a property P of an entity of class
 * C (derived from base B) is `GLUE2CP`, else `GLUE2BP`, else `GLUE2EntityP`; an
 * association `Associations/XID` is `GLUE2CXForeignKey` (or B's); containment becomes
 * the foreign keys LDAP needs (`GLUE2EndpointServiceForeignKey`, ...). Each name is
 * checked against the schema (glue2-ldap-schema.ts): what slapd would refuse is left
 * out and reported as a problem with its reason, never sent to break the whole entry.
 */
import { isElement, textOf, type XmlElement } from '../doc/element.js';
import { GLUE2_LDAP_CLASSES, GLUE2_LDAP_INTEGERS, GLUE2_LDAP_MULTI_VALUED } from './glue2-ldap-schema.js';
import { dnOf, ldifLine } from './ldif-text.js';

/** The entry a resource BDII publishes its tree under. */
export const RESOURCE_BASE_DN = 'GLUE2GroupID=resource,o=glue';

/** GLUE2 entities of the document and their LDAP object classes, base class first. */
const ENTITY_CLASSES: Readonly<Record<string, readonly string[]>> = {
  AdminDomain: ['Domain', 'AdminDomain'],
  ComputingService: ['Service', 'ComputingService'],
  ComputingEndpoint: ['Endpoint', 'ComputingEndpoint'],
  ComputingShare: ['Share', 'ComputingShare'],
  ComputingManager: ['Manager', 'ComputingManager'],
  ExecutionEnvironment: ['Resource', 'ExecutionEnvironment'],
  ApplicationEnvironment: ['ApplicationEnvironment'],
  AccessPolicy: ['Policy', 'AccessPolicy'],
  MappingPolicy: ['Policy', 'MappingPolicy'],
  Benchmark: ['Benchmark'],
  Location: ['Location'],
  Contact: ['Contact'],
};

const ALL_ATTRS: ReadonlySet<string> = new Set(Object.values(GLUE2_LDAP_CLASSES).flatMap((k) => [...k.must, ...k.may]));

/** Containers that LDAP keeps as GLUE2Group entries (A-REX's layout). */
const GROUPS = new Set(['ExecutionEnvironments', 'ApplicationEnvironments']);
/** Containers with no entry of their own: their entities hang under the resource group. */
const TRANSPARENT = new Set(['InfoRoot', 'Domains', 'Services']);

/**
 * What a required attribute says when the document does not know it (the GLUE 2.0
 * profile's placeholders; slapd refuses an entry without it). The two connectivity
 * flags are GLUE2 extended booleans, whose unknown is `undefined`.
 */
const PLACEHOLDER_INTEGER = '999999999';
const PLACEHOLDER_STRING = 'UNDEFINEDVALUE';
const PLACEHOLDER_OVERRIDE: Readonly<Record<string, string>> = {
  ExecutionEnvironmentConnectivityIn: 'undefined',
  ExecutionEnvironmentConnectivityOut: 'undefined',
};

export interface LdifEntry {
  readonly dn: string;
  /** Attribute names without the `GLUE2` prefix where they have it; objectClass first. */
  readonly attrs: ReadonlyMap<string, readonly string[]>;
}

export interface LdifRendering {
  readonly entries: readonly LdifEntry[];
  /** The LDIF text: entries separated by an empty line, parents before children. */
  readonly text: string;
  /** What was left out, each with its reason (`ComputingShare main/Foo: ...`). */
  readonly problems: readonly string[];
}

interface Parent {
  readonly dn: string;
  /** The nearest entity above: its classes and ID, for the containment foreign keys. */
  readonly entity?: { readonly classes: readonly string[]; readonly id: string };
}

interface Kind {
  /** Every attribute the entry's object classes (and GLUE2Entity) allow. */
  readonly allowed: ReadonlySet<string>;
  /** The attribute of a property: the most derived class's, else the base's, else Entity's. */
  readonly nameFor: (prop: string) => string;
}

// One per class list, made once: a big site renders hundreds of shares on every update.
const kinds = new Map<readonly string[], Kind>();

function kindOf(classes: readonly string[]): Kind {
  const known = kinds.get(classes);
  if (known !== undefined) return known;
  const allowed = new Set<string>();
  for (const c of ['Entity', ...classes]) {
    const k = GLUE2_LDAP_CLASSES[c]!;
    for (const a of [...k.must, ...k.may]) allowed.add(a);
  }
  const names = new Map<string, string>();
  const derivedFirst = [...classes].reverse();
  const nameFor = (prop: string): string => {
    let n = names.get(prop);
    if (n === undefined) {
      n = derivedFirst.map((c) => c + prop).find((a) => allowed.has(a)) ?? `Entity${prop}`;
      names.set(prop, n);
    }
    return n;
  };
  const kind = { allowed, nameFor };
  kinds.set(classes, kind);
  return kind;
}

class Builder {
  readonly entries: LdifEntry[] = [];
  readonly problems: string[] = [];
  readonly #dns = new Set<string>();

  add(dn: string, attrs: Map<string, string[]>, where: string): boolean {
    const key = dn.toLowerCase();
    if (this.#dns.has(key)) {
      this.problems.push(`${where}: left out: its DN ${dn} is taken by an earlier entry`);
      return false;
    }
    this.#dns.add(key);
    this.entries.push({ dn, attrs });
    return true;
  }

  walk(e: XmlElement, parent: Parent): void {
    const classes = ENTITY_CLASSES[e.name];
    if (classes !== undefined) return this.entity(e, classes, parent);
    if (GROUPS.has(e.name)) {
      const dn = `GLUE2GroupID=${e.name},${parent.dn}`;
      const attrs = new Map([
        ['objectClass', ['GLUE2Group']],
        ['GLUE2GroupID', [e.name]],
      ]);
      if (!this.add(dn, attrs, e.name)) return;
      for (const c of e.children) if (isElement(c)) this.walk(c, { ...parent, dn });
      return;
    }
    if (TRANSPARENT.has(e.name)) {
      // A service is the domain's sibling in LDAP, tied to it by its foreign key (A-REX's layout).
      const under = e.name === 'Services' ? { ...parent, dn: RESOURCE_BASE_DN } : parent;
      for (const c of e.children) if (isElement(c)) this.walk(c, under);
    }
    // Anything else outside an entity is not GLUE2 content (there is none today).
  }

  entity(e: XmlElement, classes: readonly string[], parent: Parent): void {
    const idAttr = `${classes[0]!}ID`;
    const id = e.children.find((c): c is XmlElement => isElement(c) && c.name === 'ID');
    const idText = id === undefined ? '' : textOf(id);
    const where = `${e.name} ${idText}`;
    if (idText === '') {
      this.problems.push(`${e.name}: left out: it has no ID`);
      return;
    }
    const { allowed, nameFor } = kindOf(classes);
    const values = new Map<string, string[]>();
    const put = (attr: string, value: string, what: string): void => {
      if (!allowed.has(attr)) {
        this.problems.push(`${where}: ${what} left out: the GLUE2 LDAP schema has no attribute for it`);
        return;
      }
      if (GLUE2_LDAP_INTEGERS.has(attr) && !/^-?[0-9]+$/.test(value)) {
        this.problems.push(`${where}: ${what} left out: GLUE2${attr} takes an integer, not ${JSON.stringify(value)}`);
        return;
      }
      if (value === '') {
        this.problems.push(`${where}: ${what} left out: an empty value`);
        return;
      }
      if (value.includes('\0')) {
        this.problems.push(`${where}: ${what} left out: a NUL character`);
        return;
      }
      const list = values.get(attr);
      if (list === undefined) values.set(attr, [value]);
      else if (!GLUE2_LDAP_MULTI_VALUED.has(attr))
        this.problems.push(`${where}: ${what} ${JSON.stringify(value)} left out: GLUE2${attr} holds one value`);
      else if (!list.includes(value)) list.push(value); // LDAP values of one attribute are a set
    };

    if (e.attrs?.CreationTime !== undefined) put('EntityCreationTime', e.attrs.CreationTime, 'CreationTime');
    if (e.attrs?.Validity !== undefined) put('EntityValidity', e.attrs.Validity, 'Validity');
    put(idAttr, idText, 'ID');
    // Containment, which the XML expresses by nesting: every foreign key LDAP has for it.
    if (parent.entity !== undefined)
      for (const c of classes)
        for (const p of parent.entity.classes) {
          const fk = `${c}${p}ForeignKey`;
          if (allowed.has(fk)) put(fk, parent.entity.id, fk);
        }
    const nested: XmlElement[] = [];
    for (const c of e.children) {
      if (!isElement(c) || c.name === 'ID') continue;
      if (c.name === 'Associations') {
        for (const a of c.children) {
          if (!isElement(a)) continue;
          const target = a.name.endsWith('ID') ? a.name.slice(0, -2) : a.name;
          // LDAP keeps some associations on one side only (a share names its endpoints,
          // an endpoint does not name its shares): the other side's key says it all.
          if (
            !allowed.has(nameFor(`${target}ForeignKey`)) &&
            classes.some((c) => ALL_ATTRS.has(`${target}${c}ForeignKey`))
          )
            continue;
          put(nameFor(`${target}ForeignKey`), textOf(a), `Associations/${a.name}`);
        }
      } else if (c.children.some(isElement)) nested.push(c);
      else put(nameFor(c.name), textOf(c), c.name);
    }
    for (const c of classes) {
      for (const a of GLUE2_LDAP_CLASSES[c]!.must) {
        if (values.has(a)) continue;
        values.set(a, [
          PLACEHOLDER_OVERRIDE[a] ?? (GLUE2_LDAP_INTEGERS.has(a) ? PLACEHOLDER_INTEGER : PLACEHOLDER_STRING),
        ]);
      }
    }
    const dn = `${dnOf([[`GLUE2${idAttr}`, idText]])},${parent.dn}`;
    const attrs = new Map<string, string[]>([['objectClass', classes.map((c) => `GLUE2${c}`)]]);
    for (const [a, v] of values) attrs.set(`GLUE2${a}`, v);
    if (!this.add(dn, attrs, where)) return;
    for (const n of nested) this.walk(n, { dn, entity: { classes, id: idText } });
  }
}

/** The LDIF of the whole tree, from `o=glue` down, for the given `InfoRoot` document. */
export function renderGlue2Ldif(infoRoot: XmlElement): LdifRendering {
  const b = new Builder();
  b.add(
    'o=glue',
    new Map([
      ['objectClass', ['organization']],
      ['o', ['glue']],
    ]),
    'o=glue',
  );
  b.add(
    RESOURCE_BASE_DN,
    new Map([
      ['objectClass', ['GLUE2Group']],
      ['GLUE2GroupID', ['resource']],
    ]),
    RESOURCE_BASE_DN,
  );
  b.walk(infoRoot, { dn: RESOURCE_BASE_DN });
  const parts: string[] = [];
  for (const entry of b.entries) {
    const lines = [`dn: ${entry.dn}`];
    for (const [attr, vals] of entry.attrs) for (const v of vals) lines.push(ldifLine(attr, v));
    parts.push(lines.join('\n'));
  }
  return { entries: b.entries, text: parts.join('\n\n') + '\n', problems: b.problems };
}
