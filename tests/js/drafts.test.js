// The workbench's kept drafts (static/js/drafts.js): retry schedule, record shape, and what to do with a kept
// draft given the server's version. Run: node --test tests/js/*.test.js; tests/unit/test_js_helpers.py runs
// them under pytest. Node's own runner and assert only.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const Drafts = require(path.join(__dirname, "..", "..", "static", "js", "drafts.js"));

const NAME = { start: 9, end: 19, label: "NAME", origin: "human", status: "accepted" };
const DATE = { start: 31, end: 41, label: "DATE", origin: "model", status: "accepted" };
const CITY_SUGGESTED = { start: 45, end: 52, label: "CITY", origin: "model", status: "pending" };

function kept(fields) {
  return Drafts.draftRecord(Object.assign(
    { annotation: 17, version: 4, spans: [NAME, DATE], activeSeconds: 0, unconfirmed: [], savedAt: 1000 }, fields));
}

function server(fields) {
  return Object.assign({ id: 17, version: 4, state: "draft", spans: [] }, fields);
}

test("retries back off 1, 2, 4, 8, 15 then 30 s, spread by at most a fifth either way", () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 40].map((n) => Drafts.retryDelayMs(n, 0.5)),
    [1000, 2000, 4000, 8000, 15000, 30000, 30000, 30000]);
  assert.equal(Drafts.retryDelayMs(0), 1000);  // no random number: no spread
  assert.equal(Drafts.retryDelayMs(2, 0), 3200);
  assert.equal(Drafts.retryDelayMs(2, 0.999999), 4800);
  assert.equal(Drafts.retryDelayMs(-3, 0.5), 1000);
});

test("an outage is no answer or a 5xx; a refusal is not", () => {
  assert.deepEqual([0, 500, 502, 503, 504].map(Drafts.isOutage), [true, true, true, true, true]);
  assert.deepEqual([200, 400, 403, 404, 409, 429].map(Drafts.isOutage), [false, false, false, false, false, false]);
});

test("the kept record: one key per annotation, spans as the server stores them, time to a tenth", () => {
  assert.equal(Drafts.draftKey(17), "deidloop:draft:17");
  const record = Drafts.draftRecord({
    annotation: 17, version: 4, activeSeconds: 12.345, savedAt: 1718000000000,
    spans: [{ id: 3, start: 9, end: 19, label: "NAME", confidence: 0.9 }, CITY_SUGGESTED],
    unconfirmed: [{ version: 4, spans: [{ start: 9, end: 19, label: "NAME", origin: "model" }] }],
  });
  assert.deepEqual(record, {
    shape: 1, annotation: 17, version: 4,
    spans: [NAME, CITY_SUGGESTED],
    activeSeconds: 12.3,
    unconfirmed: [{ version: 4, spans: [{ start: 9, end: 19, label: "NAME", origin: "model", status: "pending" }],
      submit: false }],
    savedAt: 1718000000000,
  });
  const bare = Drafts.draftRecord({ annotation: 1, version: 1, spans: [], activeSeconds: -5 });
  assert.deepEqual([bare.activeSeconds, bare.unconfirmed], [0, []]);
});

test("writes without an answer: each once, the first five of an outage", () => {
  let writes = [];
  writes = Drafts.withUnconfirmed(writes, { version: 4, spans: [NAME] });
  writes = Drafts.withUnconfirmed(writes, { version: 4, spans: [{ start: 9, end: 19, label: "NAME" }] });  // the same
  assert.deepEqual(writes, [{ version: 4, spans: [NAME], submit: false }]);
  writes = Drafts.withUnconfirmed(writes, { version: 4, spans: [NAME], submit: true });  // a submission is another
  assert.equal(writes.length, 2);
  for (let end = 20; end < 26; end++) {
    writes = Drafts.withUnconfirmed(writes, { version: 4, spans: [{ ...NAME, end: end }] });
  }
  assert.equal(writes.length, 5);
  assert.deepEqual(writes.map((w) => w.spans[0].end), [19, 19, 20, 21, 22]);
});

test("a stored record reads back; anything else is no kept draft", () => {
  const record = kept({ activeSeconds: 7.5, unconfirmed: [{ version: 4, spans: [NAME], submit: true }] });
  assert.deepEqual(Drafts.parseDraft(JSON.stringify(record), 17), record);
  assert.equal(Drafts.parseDraft(JSON.stringify(record), 18), null);  // another annotation's
  assert.equal(Drafts.parseDraft(null, 17), null);
  assert.equal(Drafts.parseDraft("{not json", 17), null);
  assert.equal(Drafts.parseDraft(JSON.stringify({ ...record, shape: 2 }), 17), null);
  assert.equal(Drafts.parseDraft(JSON.stringify({ ...record, version: "4" }), 17), null);
  assert.equal(Drafts.parseDraft(JSON.stringify({ ...record, spans: [{ start: 1, label: "X" }] }), 17), null);
  // A damaged write without an answer is dropped, the draft itself kept.
  const damaged = Drafts.parseDraft(JSON.stringify(
    { ...record, unconfirmed: [{ version: 4, spans: "?" }, record.unconfirmed[0]] }), 17);
  assert.deepEqual(damaged.unconfirmed, record.unconfirmed);
  assert.deepEqual(damaged.spans, record.spans);
  assert.deepEqual(Drafts.parseDraft(JSON.stringify({ ...record, unconfirmed: "?" }), 17).unconfirmed, []);
});

test("span lists compare in any order; loosely, only offsets and labels count", () => {
  assert.equal(Drafts.sameSpans([NAME, DATE], [DATE, NAME]), true);
  assert.equal(Drafts.sameSpans([NAME], [{ start: 9, end: 19, label: "NAME" }]), true);  // human: accepted
  assert.equal(Drafts.sameSpans([CITY_SUGGESTED], [{ ...CITY_SUGGESTED, status: "accepted" }]), false);
  assert.equal(Drafts.sameSpans([CITY_SUGGESTED], [{ ...CITY_SUGGESTED, status: "accepted", origin: "human" }], true), true);
  assert.equal(Drafts.sameSpans([NAME], [NAME, DATE]), false);
  assert.equal(Drafts.sameSpans([NAME], [{ ...NAME, end: 18 }], true), false);
});

test("no kept draft, or another annotation's: nothing to do", () => {
  assert.equal(Drafts.recoveryAction(null, server({})), "none");
  assert.equal(Drafts.recoveryAction(kept({ annotation: 18 }), server({})), "none");
});

test("the server still at the draft's version: the draft is newer and is saved", () => {
  assert.equal(Drafts.recoveryAction(kept({}), server({ version: 4, spans: [NAME] })), "save");
  // Same spans but active time not yet counted: saved for the time.
  assert.equal(Drafts.recoveryAction(kept({ activeSeconds: 3 }), server({ spans: [NAME, DATE] })), "save");
  assert.equal(Drafts.recoveryAction(kept({}), server({ spans: [DATE, NAME] })), "discard");
});

test("the server moved on: dropped if it holds the draft, saved over our own lost write, else a conflict", () => {
  assert.equal(Drafts.recoveryAction(kept({}), server({ version: 5, spans: [NAME, DATE] })), "discard");
  // Our write of [NAME] at version 4 did reach the server (now 5); the draft was edited after it.
  const own = kept({ unconfirmed: [{ version: 4, spans: [DATE] }, { version: 4, spans: [NAME] }] });
  assert.equal(Drafts.recoveryAction(own, server({ version: 5, spans: [NAME] })), "rebase");
  // A submission that got through is not a draft to build on.
  const submittedWrite = kept({ unconfirmed: [{ version: 4, spans: [NAME], submit: true }] });
  assert.equal(Drafts.recoveryAction(submittedWrite, server({ version: 5, spans: [NAME] })), "conflict");
  // Someone else's version 5, or a version after ours: never overwritten silently.
  assert.equal(Drafts.recoveryAction(own, server({ version: 5, spans: [CITY_SUGGESTED] })), "conflict");
  assert.equal(Drafts.recoveryAction(own, server({ version: 6, spans: [NAME] })), "conflict");
  assert.equal(Drafts.recoveryAction(kept({}), server({ version: 5, spans: [NAME] })), "conflict");
  // A server behind the draft (a restored database): a person decides.
  assert.equal(Drafts.recoveryAction(kept({}), server({ version: 3, spans: [NAME] })), "conflict");
});

test("a submitted record: dropped when it was submitted as kept, else a conflict", () => {
  const submittedAsKept = server({ version: 6, state: "submitted", spans: [NAME, { ...DATE, origin: "human" }] });
  assert.equal(Drafts.recoveryAction(kept({}), submittedAsKept), "discard");
  assert.equal(Drafts.recoveryAction(kept({}), server({ version: 4, state: "submitted", spans: [NAME] })), "conflict");
});

test("the conflict says which versions, and that nothing was overwritten", () => {
  assert.equal(Drafts.conflictText(kept({}), server({ version: 6 })),
    "This browser kept a draft of this record that never reached the server (edited from version 4), but the " +
    "record has changed since (now version 6). Nothing was overwritten: choose which to keep.");
  assert.equal(Drafts.conflictText(kept({}), server({ version: 6, state: "submitted" })),
    "This browser kept a draft of this record that never reached the server (edited from version 4), but the " +
    "record has since been submitted (version 6) and can no longer change here. Nothing was overwritten.");
  assert.equal(Drafts.conflictText(kept({}), server({ version: 2 })),
    "This browser kept a draft of this record that never reached the server (edited from version 4), but the " +
    "server is back at an older version (2). Nothing was overwritten: choose which to keep.");
});
