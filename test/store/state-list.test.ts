// State names in SQL text come from the vocabulary through src/store/state-list.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sqlState, sqlStates } from '../../src/store/state-list.js';
import { FINAL_STATES, type InternalState } from '../../src/vocabulary/job-states.js';

describe('state names as SQL literals', () => {
  it('quotes each name and joins a list', () => {
    assert.equal(sqlStates(FINAL_STATES), "'FINISHED','DELETED'");
    assert.equal(sqlState('WIPED'), "'WIPED'");
  });
  it('refuses an empty list (IN () is no SQL)', () => {
    assert.throws(() => sqlStates([]), /empty state list/);
  });
  it('refuses what is not a name (a position, a quote)', () => {
    assert.throws(() => sqlState('PENDING:INLRMS' as InternalState), /not a state name/);
    assert.throws(() => sqlState("X' OR '1'='1" as InternalState), /not a state name/);
  });
});
