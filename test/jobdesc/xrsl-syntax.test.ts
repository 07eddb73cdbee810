/** The RSL lexical and syntactic level: strings, comments, variables, structure, errors with positions. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xrslError, xrslFail, xrslOk } from './helpers.js';

describe('xRSL strings', () => {
  it('reads unquoted literals up to a special character', () => {
    assert.deepEqual(xrslOk('&(arguments=http://h/f?x APPS/HEP/ATLAS-1.0 a*b ünï)').arguments, [
      'http://h/f?x',
      'APPS/HEP/ATLAS-1.0',
      'a*b',
      'ünï',
    ]);
  });

  it('keeps special characters inside quotes, newlines included', () => {
    assert.deepEqual(xrslOk('&(arguments="a=b (c) & | + # $ ^ !" \'x\ny\')').arguments, [
      'a=b (c) & | + # $ ^ !',
      'x\ny',
    ]);
  });

  it('treats doubled quotes as one quote, in both quote styles', () => {
    assert.deepEqual(xrslOk(`&(arguments="""" '''' "a""b""c")`).arguments, ['"', "'", 'a"b"c']);
  });

  it('reads ^D...D with any delimiter, doubled delimiter escaping it', () => {
    assert.deepEqual(xrslOk(`&(arguments=^#a "b" 'c'# ^!x!!y! ^|b| ^)x) )`).arguments, [`a "b" 'c'`, 'x!y', 'b', 'x']);
  });

  it('handles a non-BMP user delimiter', () => {
    assert.deepEqual(xrslOk('&(arguments=^😀in 😀😀 side😀)').arguments, ['in 😀 side']);
  });

  it('reads empty strings', () => {
    assert.deepEqual(xrslOk(`&(arguments="" '' ^%%)`).arguments, ['', '', '']);
  });

  it('reports unterminated strings at their opening quote', () => {
    assert.equal(xrslError('&(jobname=t)(executable="/bin/true)'), '1:25: End of double quoted string not found');
    assert.equal(xrslError("&(jobname=t)(executable='/bin/true)"), '1:25: End of single quoted string not found');
    assert.equal(
      xrslError('&(jobname=t)(executable=^%/bin/true)'),
      '1:25: End of user delimiter (%) quoted string not found',
    );
    assert.equal(xrslError('&(jobname=t)(executable=^'), '1:25: End of user delimiter quoted string not found');
    assert.equal(xrslError('&(jobname=t)(executable="a""'), '1:25: End of double quoted string not found');
  });
});

describe('xRSL comments', () => {
  it('skips comments between any tokens', () => {
    const d = xrslOk('(*a*)&(*b*)((*c*)executable(*d*)=(*e*)/bin/true(*f*))(*g*)');
    assert.equal(d.executable, '/bin/true');
  });

  it('does not nest: the first *) ends the comment', () => {
    assert.equal(xrslOk('&(* outer (* inner *)(executable=/bin/true)').executable, '/bin/true');
    assert.equal(xrslError('&(executable=/bin/true)(* a (* b *) c *)'), '1:37: Junk at end of RSL');
  });

  it('separates values: a comment between two values prevents concatenation', () => {
    assert.deepEqual(xrslOk('&(arguments="a"(*x*)"b")').arguments, ['a', 'b']);
  });

  it('refuses an unterminated comment without claiming the text', () => {
    const f = xrslFail('&(executable=/bin/true)(* never closed');
    assert.equal(f.code, 'CE_ERR_JOBDESC_NOT_RECOGNISED');
    assert.equal(
      f.reason,
      'No job description parser was able to interpret job description\nnordugrid:xrsl: 1:24: End of comment not found',
    );
  });
});

describe('xRSL variables and concatenation', () => {
  it('substitutes variables with whitespace inside the reference and quoted names', () => {
    const d = xrslOk('&(rsl_substitution=("A" "x")("B" "y"))(arguments=$( A ) $("B")z)');
    assert.deepEqual(d.arguments, ['x', 'yz']);
  });

  it('lets later definitions use earlier ones, and nested groups see outer ones', () => {
    const d = xrslOk('&(rsl_substitution=("A" "1"))(rsl_substitution=("B" $(A)"2"))(&(arguments=$(A) $(B)))');
    assert.deepEqual(d.arguments, ['1', '12']);
  });

  it('does not let a nested group leak its definitions', () => {
    const d = xrslOk('&(&(rsl_substitution=("A" "inner")))(arguments=[$(A)])');
    assert.deepEqual(d.arguments, ['[]']);
  });

  it('lets a pair use the pairs before it in the same relation', () => {
    assert.deepEqual(xrslOk('&(rsl_substitution=("A" "1")("B" $(A)"2"))(arguments=$(B))').arguments, ['12']);
  });

  it('uses definitions only after they appear', () => {
    assert.deepEqual(xrslOk('&(arguments=$(A))(rsl_substitution=("A" "late"))').arguments, ['']);
  });

  it('concatenates explicitly with # across spaces and implicitly when touching', () => {
    assert.deepEqual(xrslOk('&(arguments=a # b "c"\'d\'^%e% f)').arguments, ['ab', 'cde', 'f']);
    assert.deepEqual(xrslOk('&(rsl_substitution=("H" "/home"))(arguments=$(H)/bin $(H)$(H))').arguments, [
      '/home/bin',
      '/home/home',
    ]);
  });

  it('keeps touching sequences separate (inputfiles written without spaces)', () => {
    const d = xrslOk('&(inputfiles=("a" "")("b" ""))');
    assert.deepEqual(
      d.inputFiles.map((f) => f.name),
      ['a', 'b'],
    );
  });

  it('reports concatenation errors', () => {
    assert.equal(xrslError('&(jobname=x)(arguments= # b)'), '1:25: No left operand for concatenation operator');
    assert.equal(xrslError('&(jobname=x)(arguments=a #)'), '1:26: No right operand for concatenation operator');
    assert.equal(
      xrslError('&(jobname=x)(arguments=(a b) # c)'),
      '1:24: Left operand for RSL concatenation does not evaluate to a literal',
    );
    assert.equal(
      xrslError('&(jobname=x)(arguments=c # (a b))'),
      '1:28: Right operand for RSL concatenation does not evaluate to a literal',
    );
  });

  it('reports malformed variable references', () => {
    assert.equal(xrslError('&(jobname=x)(arguments=$A)'), "1:25: '(' expected");
    assert.equal(xrslError('&(jobname=x)(arguments=$())'), '1:26: Variable name expected');
    assert.equal(xrslError('&(jobname=x)(arguments=$(A B))'), "1:28: ')' expected");
    assert.equal(
      xrslError('&(jobname=x)(arguments=$("a=b"))'),
      '1:26: Variable name (a=b) contains invalid character (=)',
    );
  });

  it('reports malformed substitutions', () => {
    assert.equal(xrslError('&(jobname=x)(rsl_substitution="A")'), '1:14: RSL substitution is not a sequence');
    assert.equal(
      xrslError('&(jobname=x)(rsl_substitution=("A" "1" "2"))'),
      '1:31: RSL substitution sequence is not of length 2',
    );
    assert.equal(
      xrslError('&(jobname=x)(rsl_substitution=(("A") "1"))'),
      '1:31: RSL substitution variable name does not evaluate to a literal',
    );
  });
});

describe('xRSL structure', () => {
  it('accepts every relation operator and ignores it where it has no meaning', () => {
    const d = xrslOk('&(count>4)(jobname<=x)(stdout>=o)(stdin<i)(gmlog!=g)');
    assert.equal(d.count, 4);
    assert.deepEqual([d.jobName, d.stdout, d.stdin, d.logDir], ['x', 'o', 'i', 'g']);
  });

  it('accepts nested & groups and an empty value list for ignored attributes', () => {
    const d = xrslOk('&(&(&(executable=/bin/true)))(middleware=)');
    assert.equal(d.executable, '/bin/true');
  });

  it('takes the first branch of | and still validates the others', () => {
    assert.equal(xrslOk('&(executable=x)(|(jobname=a)(jobname=b))').jobName, 'a');
    assert.match(
      xrslError('&(executable=x)(|(jobname=a)(count=bad))'),
      /Value of 'count' attribute must be an integer/,
    );
  });

  it('allows + only at the top level', () => {
    assert.equal(xrslError('&(executable=x)(+(jobname=a))'), '1:17: Multi-request operator only allowed at top level');
  });

  it('reports structural errors with line and column', () => {
    assert.equal(xrslError('&(executable=x)\n(jobname=y'), "2:11: ')' expected");
    assert.equal(xrslError('&(executable=x)\n  (=y)'), '2:4: Attribute name expected');
    assert.equal(xrslError('&(executable=x)(jobname y)'), '1:25: Relation operator expected');
    assert.equal(xrslError('&(executable=x)(jobname!y)'), '1:24: Relation operator expected');
    assert.equal(
      xrslError('&(executable=x)("job name"=y)'),
      '1:17: Attribute name (job name) contains invalid character ( )',
    );
    assert.equal(xrslError('&(executable=x)&(jobname=y)'), '1:16: Junk at end of RSL');
  });

  it('leaves the text unclaimed when nothing was parsed yet', () => {
    for (const body of ['&executable=x', '&(=x)', '&("unterminated=x)', '&(executable x)']) {
      const f = xrslFail(body);
      assert.equal(f.code, 'CE_ERR_JOBDESC_NOT_RECOGNISED', body);
      assert.ok(
        f.reason.startsWith('No job description parser was able to interpret job description\nnordugrid:xrsl: 1:'),
        f.reason,
      );
    }
  });

  it('claims a semantic error even in the first relation', () => {
    assert.equal(xrslFail('&(count=x)').code, 'CE_ERR_JOBDESC_XRSL_INVALID');
  });
});
