/** Small assertions shared by the job description tests. */
import assert from 'node:assert/strict';
import { parseAdl } from '../../src/jobdesc/adl/parse-adl-body.js';
import type { ItemFailure } from '../../src/jobdesc/item-failure.js';
import type { JobDescription } from '../../src/vocabulary/job-description.js';
import { parseXrsl } from '../../src/jobdesc/xrsl/parse-xrsl.js';
import { ADL_NS, NG_NS } from './fixtures/samples.js';

export function xrslOk(text: string): JobDescription {
  const r = parseXrsl(text);
  assert.equal(r.ok, true, r.ok ? '' : `expected ${JSON.stringify(text)} to parse, got: ${r.reason}`);
  return (r as { description: JobDescription }).description;
}

export function xrslFail(text: string): ItemFailure {
  const r = parseXrsl(text);
  assert.equal(r.ok, false, `expected ${JSON.stringify(text)} to fail`);
  return r;
}

/** The `line:column: message` of a claimed xRSL error. */
export function xrslError(text: string): string {
  const f = xrslFail(text);
  assert.equal(f.code, 'CE_ERR_JOBDESC_XRSL_INVALID', f.reason);
  const prefix = 'nordugrid:xrsl parsing error:\n';
  assert.ok(f.reason.startsWith(prefix), f.reason);
  return f.reason.slice(prefix.length);
}

/** An ADL document in the default namespace with the NorduGrid prefix `ng`. */
export function adlDoc(inner: string): string {
  return `<ActivityDescription xmlns="${ADL_NS}" xmlns:ng="${NG_NS}">${inner}</ActivityDescription>`;
}

export function adlOk(text: string): JobDescription {
  const r = parseAdl(text);
  assert.equal(r.ok, true, r.ok ? '' : `expected ADL to parse, got: ${r.reason}`);
  return (r as { description: JobDescription }).description;
}

/** The specific message after `emies:adl parsing error:`. */
export function adlError(text: string): string {
  const r = parseAdl(text);
  assert.equal(r.ok, false, 'expected ADL to fail');
  const f = r;
  assert.equal(f.code, 'CE_ERR_JOBDESC_ADL_INVALID', f.reason);
  const prefix = 'emies:adl parsing error:\n';
  assert.ok(f.reason.startsWith(prefix), f.reason);
  return f.reason.slice(prefix.length);
}
