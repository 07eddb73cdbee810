/**
 * A refused description's failure carries the line of the body it concerns (the web's
 * submission form shows the message beside that line), while its reason text, which the
 * REST answer carries, stays exactly as it was (each expected text below was taken from
 * the parsers before the line was added).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitSubmission } from '../../src/jobdesc/split-submission.js';
import { renderBulk } from '../../src/api/rest/jobs/render.js';

const ADL = 'http://www.eu-emi.eu/es/2010/12/adl';

function failureOf(body: string, item = 0): { reason: string; line: number | undefined } {
  const it = splitSubmission(body).items[item];
  assert.ok(it !== undefined && !it.ok, 'the item fails');
  return { reason: it.reason, line: it.line };
}

describe('the line of a refused description', () => {
  it('xRSL syntax error: the line of the broken token', () => {
    const f = failureOf('&(executable="/bin/true")\n(arguments="a"\n(jobname="x")');
    assert.equal(f.line, 3);
    assert.equal(f.reason, "nordugrid:xrsl parsing error:\n3:9: ')' expected");
  });

  it('xRSL attribute error: the line of the relation', () => {
    const f = failureOf('&(executable="/bin/true")\n(jobname="x")\n\n(cputime="soon")');
    assert.equal(f.line, 4);
    assert.match(f.reason, /^nordugrid:xrsl parsing error:\n4:\d+: /);
  });

  it('a + multi-xRSL operand: the line in the whole body', () => {
    const body = '+(&(executable="/bin/true"))\n(&(executable="/bin/true")\n(count="many"))';
    assert.equal(splitSubmission(body).items[0]?.ok, true);
    assert.equal(failureOf(body, 1).line, 3);
  });

  it('ADL that is not well-formed: the line where the XML breaks', () => {
    const f = failureOf(`<ActivityDescription xmlns="${ADL}">\n<Application>\n</Resources>\n</ActivityDescription>`);
    assert.equal(f.line, 3);
    assert.match(f.reason, /^Unable to parse job description\.\nXML: /);
  });

  it('ADL semantic error: the line of the element concerned', () => {
    const f = failureOf(
      `<ActivityDescription xmlns="${ADL}">\n<Application><Executable><Path>/bin/true</Path></Executable></Application>\n` +
        '<Resources>\n<SlotRequirement>\n<NumberOfSlots>two</NumberOfSlots>\n</SlotRequirement>\n</Resources>\n</ActivityDescription>',
    );
    assert.equal(f.line, 5);
    assert.equal(f.reason, "emies:adl parsing error:\nNumberOfSlots must be an integer, not 'two'");
  });

  it('ADL bulk: each item its own line in the whole document', () => {
    const one = (slots: string) =>
      `<ActivityDescription xmlns="${ADL}"><Resources><SlotRequirement><NumberOfSlots>${slots}</NumberOfSlots></SlotRequirement></Resources></ActivityDescription>`;
    const body = `<ActivityDescriptions>\n${one('1')}\n${one('x')}\n</ActivityDescriptions>`;
    assert.equal(splitSubmission(body).items[0]?.ok, true);
    assert.equal(failureOf(body, 1).line, 3);
  });

  it('a wrong root element: its line', () => {
    const f = failureOf('<?xml version="1.0"?>\n\n<Job/>');
    assert.equal(f.line, 3);
  });

  it('the line is no part of a REST answer: JSON, XML and HTML byte for byte as without it', () => {
    const item = {
      status: 400,
      reason: "emies:adl parsing error:\nNumberOfSlots must be an integer, not 'two'",
      code: 'CE_ERR_JOBDESC_ADL_INVALID',
    };
    for (const format of ['json', 'xml', 'html'] as const)
      assert.equal(renderBulk([{ ...item, line: 5 }], format), renderBulk([item], format), format);
  });
});
