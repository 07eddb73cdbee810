import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCeError } from '../../src/errors/ce-error.js';
import { detectFormat } from '../../src/jobdesc/detect-format.js';

function throwsCode(fn: () => unknown, code: string, status = 400): void {
  assert.throws(fn, (e: unknown) => isCeError(e) && e.code === code && e.statusCode === status);
}

describe('detectFormat', () => {
  it('recognises ADL, single and multi xRSL by the first significant character', () => {
    assert.deepEqual(detectFormat(Buffer.from('<ActivityDescription/>')), {
      format: 'adl',
      text: '<ActivityDescription/>',
      start: 0,
    });
    assert.equal(detectFormat(Buffer.from('&(executable=x)')).format, 'xrsl');
    const multi = detectFormat(Buffer.from('+(&(a=b))'));
    assert.equal(multi.format, 'xrsl');
    assert.equal(multi.text[multi.start], '+');
  });

  it('skips all RSL whitespace before the first character', () => {
    const d = detectFormat(Buffer.from(' \t\r\n\v\f&(a=b)'));
    assert.equal(d.format, 'xrsl');
    assert.equal(d.start, 6);
  });

  it('accepts a UTF-8 BOM and removes it from the text', () => {
    const d = detectFormat(Buffer.from('\uFEFF<x/>', 'utf8'));
    assert.equal(d.format, 'adl');
    assert.equal(d.text, '<x/>');
  });

  it('accepts leading (* comments *) before xRSL', () => {
    const d = detectFormat(Buffer.from('(* one *)\n(* two (* not nested *)  &(a=b)'));
    assert.equal(d.format, 'xrsl');
    assert.equal(d.text[d.start], '&');
  });

  it('does not take a comment followed by XML as a description', () => {
    throwsCode(() => detectFormat(Buffer.from('(* c *)<ActivityDescription/>')), 'CE_ERR_JOBDESC_UNRECOGNIZED');
  });

  it('refuses an unterminated leading comment as unrecognised', () => {
    assert.throws(
      () => detectFormat(Buffer.from('(* no end &(a=b)')),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_JOBDESC_UNRECOGNIZED' && e.message.includes('unterminated'),
    );
  });

  it('refuses other first characters: |, (, {, letters', () => {
    for (const body of ['|(&(a=b))(&(c=d))', '(executable=x)', '{"job":[]}', 'executable=x', '#']) {
      throwsCode(() => detectFormat(Buffer.from(body)), 'CE_ERR_JOBDESC_UNRECOGNIZED');
    }
  });

  it('distinguishes a missing body from a blank one (A-REX texts)', () => {
    assert.throws(
      () => detectFormat(Buffer.alloc(0)),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_JOBDESC_MISSING_PAYLOAD' && e.message === 'Missing payload',
    );
    assert.throws(
      () => detectFormat(Buffer.from(' \r\n\t ')),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_JOBDESC_EMPTY_PAYLOAD' && e.message === 'Payload is empty',
    );
    throwsCode(() => detectFormat(Buffer.from('(* only a comment *)  ')), 'CE_ERR_JOBDESC_EMPTY_PAYLOAD');
    throwsCode(() => detectFormat(Buffer.from('\uFEFF', 'utf8')), 'CE_ERR_JOBDESC_EMPTY_PAYLOAD');
  });

  it('refuses invalid UTF-8 as a whole-request error', () => {
    const bad = [
      Buffer.from([0x26, 0x28, 0x61, 0x3d, 0xff, 0x29]), // stray 0xff
      Buffer.from([0x3c, 0x61, 0xc0, 0xaf, 0x2f, 0x3e]), // overlong '/'
      Buffer.from([0x26, 0xed, 0xa0, 0x80]), // encoded surrogate
      Buffer.from([0x26, 0x28, 0xe2, 0x82]), // truncated sequence at the end
    ];
    for (const b of bad) throwsCode(() => detectFormat(b), 'CE_ERR_JOBDESC_INVALID_UTF8');
  });

  it('accepts non-ASCII UTF-8 and already-decoded strings', () => {
    assert.equal(detectFormat(Buffer.from('&(jobname="Jöb ✓")', 'utf8')).text, '&(jobname="Jöb ✓")');
    assert.equal(detectFormat('&(a=b)').format, 'xrsl');
  });
});
