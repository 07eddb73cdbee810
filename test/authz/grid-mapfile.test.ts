// The grid-mapfile reader: comments, quoted DNs with commas and escapes, account
// lists, and bad lines skipped and reported without losing the good ones.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGridMapFile } from '../../src/authz/grid-mapfile.js';

describe('grid-mapfile', () => {
  it('reads quoted DNs, the first account of a list, and skips comments and blank lines', () => {
    const g = parseGridMapFile(
      [
        '# site grid-mapfile',
        '',
        '   # indented comment',
        '"/DC=org/DC=example/CN=Jane Doe" jdoe',
        '"/DC=org/DC=example/O=Acme, Inc./CN=Bob" bob,bob2,bob3',
        '"/O=Site/CN=Quote \\"Q\\" and back\\\\slash" q_user',
        '"/O=Site/CN=Jos\\xC3\\xA9"\tjose',
        '/O=Site/CN=unquoted plain',
        '"/O=Site/CN=spaced list"   first , second',
        '"/DC=org/DC=example/CN=Jane Doe" other',
        '\r',
      ].join('\r\n'),
    );
    assert.deepEqual(Object.fromEntries(g.accounts), {
      '/DC=org/DC=example/CN=Jane Doe': 'jdoe',
      '/DC=org/DC=example/O=Acme, Inc./CN=Bob': 'bob',
      '/O=Site/CN=Quote "Q" and back\\slash': 'q_user',
      '/O=Site/CN=Jos\\xC3\\xA9': 'jose',
      '/O=Site/CN=unquoted': 'plain',
      '/O=Site/CN=spaced list': 'first',
    });
    assert.deepEqual(g.problems, []);
  });

  it('reports bad lines with their numbers and keeps the rest', () => {
    const g = parseGridMapFile(
      [
        '"/O=Site/CN=no close quote acct',
        '"/O=Site/CN=no account"',
        '"/O=Site/CN=glued"acct',
        '"" empty',
        '"/O=Site/CN=pool" .atlas',
        '"/O=Site/CN=bad name" 9lives',
        '"/O=Site/CN=bad name2" a;rm',
        '"/O=Site/CN=ok" good',
        '"/O=Site/CN=comma first" ,x',
      ].join('\n'),
    );
    assert.deepEqual(Object.fromEntries(g.accounts), { '/O=Site/CN=ok': 'good' });
    assert.deepEqual(
      g.problems.map((p) => p.line),
      [1, 2, 3, 4, 5, 6, 7, 9],
    );
    assert.match(g.problems[0]!.reason, /closing quote/);
    assert.match(g.problems[4]!.reason, /pool/);
  });

  it('an empty or comment-only file maps nobody', () => {
    assert.equal(parseGridMapFile('').accounts.size, 0);
    assert.equal(parseGridMapFile('# nothing\n\n').accounts.size, 0);
  });
});
