/* The workbench's drafts kept in the browser while the server is away: the record kept in localStorage, the
 * retry schedule, and the decision, on opening a record or after a refused write, between saving the kept
 * draft, dropping it (the server has it already) and showing a conflict (the record changed elsewhere).
 * Nothing here touches the DOM, the network or localStorage: Node tests it (tests/js/drafts.test.js).
 *
 * A kept draft is one localStorage entry per annotation (draftKey), holding the version of the annotation
 * it was edited from, so the pair (annotation, version) says what it may be saved over:
 *   { shape: 1, annotation: 17, version: 4, spans: [{start, end, label, origin, status}, …],
 *     activeSeconds: 12.5, unconfirmed: [{version, spans, submit}, …], savedAt: 1718000000000 }
 * `unconfirmed` lists writes sent without an answer (the connection broke mid-request): one of them may have
 * reached the server, and then the server's newer version is this browser's own, not someone else's.
 *
 * In the page this is a plain script loaded before workbench.js, as window.deidloopDrafts; Node require()s it.
 */
(function (root) {
  "use strict";

  var SHAPE = 1;
  // The page's translations (Django's JavaScript catalogue, loaded first); under Node, the English as written.
  var gettext = root && root.gettext ? root.gettext : function (text) { return text; };
  var interpolate = root && root.interpolate ? root.interpolate : function (format, values) {
    return format.replace(/%\((\w+)\)s/g, function (_, name) { return String(values[name]); });
  };
  var KEY_PREFIX = "deidloop:draft:";
  // Seconds between tries while the server is away: quick at first (a restart takes seconds), then every
  // 30 s at most, so many open workbenches do not hammer a server that is coming back.
  var BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000];
  var JITTER = 0.2;  // ±20 %, so the workbenches of one team spread their tries
  // Writes without an answer remembered: the first ones of an outage (the one that was under way when the
  // server went is the one that may have landed; later ones found no server at all).
  var UNCONFIRMED_KEPT = 5;

  // The delay before try number `attempt` (0 for the first retry); `random` in [0, 1) spreads it (0.5: none).
  function retryDelayMs(attempt, random) {
    var base = BACKOFF_MS[Math.min(Math.max(0, attempt | 0), BACKOFF_MS.length - 1)];
    var r = random === undefined ? 0.5 : random;
    return Math.round(base * (1 - JITTER + 2 * JITTER * r));
  }

  // A failed request that means "the server (or its database) is away", not "this request is wrong":
  // no answer at all (status 0) or a 5xx. Such a write is kept and tried again.
  function isOutage(status) { return status === 0 || status >= 500; }

  function draftKey(annotationId) { return KEY_PREFIX + annotationId; }

  // A span as the server stores it: a span without origin is human's, and a human's span is accepted.
  function wireSpan(span) {
    var origin = span.origin || "human";
    return {
      start: span.start, end: span.end, label: span.label, origin: origin,
      status: span.status === "accepted" || origin === "human" ? "accepted" : "pending",
    };
  }

  function roundTenth(seconds) { return Math.round(Math.max(0, Number(seconds) || 0) * 10) / 10; }

  function unconfirmedWrite(write) {
    return { version: write.version, spans: write.spans.map(wireSpan), submit: !!write.submit };
  }

  function draftRecord(fields) {
    return {
      shape: SHAPE, annotation: fields.annotation, version: fields.version,
      spans: fields.spans.map(wireSpan), activeSeconds: roundTenth(fields.activeSeconds),
      unconfirmed: (fields.unconfirmed || []).map(unconfirmedWrite),
      savedAt: fields.savedAt,
    };
  }

  // `writes` with one more write sent without an answer: the same write twice is listed once, and only the
  // first UNCONFIRMED_KEPT are kept.
  function withUnconfirmed(writes, write) {
    var added = unconfirmedWrite(write);
    var known = writes.some(function (w) {
      return w.version === added.version && w.submit === added.submit && sameSpans(w.spans, added.spans, false);
    });
    return known || writes.length >= UNCONFIRMED_KEPT ? writes : writes.concat([added]);
  }

  function isSpanList(value) {
    return Array.isArray(value) && value.every(function (s) {
      return s && Number.isInteger(s.start) && Number.isInteger(s.end) && typeof s.label === "string";
    });
  }

  // The kept draft of `annotationId` from its stored JSON, or null when there is none or it is not one of
  // ours (another shape, another annotation, damaged): a damaged entry must not stop the page from opening.
  function parseDraft(json, annotationId) {
    if (typeof json !== "string") return null;
    var value;
    try { value = JSON.parse(json); } catch (error) { return null; }
    if (!value || value.shape !== SHAPE || value.annotation !== annotationId) return null;
    if (!Number.isInteger(value.version) || !isSpanList(value.spans)) return null;
    // A damaged write without an answer is dropped; the draft itself is kept.
    var unconfirmed = (Array.isArray(value.unconfirmed) ? value.unconfirmed : []).filter(function (w) {
      return w && Number.isInteger(w.version) && isSpanList(w.spans);
    });
    return draftRecord({
      annotation: value.annotation, version: value.version, spans: value.spans,
      activeSeconds: value.activeSeconds, unconfirmed: unconfirmed, savedAt: value.savedAt,
    });
  }

  function spanKey(span, loose) {
    var s = wireSpan(span);
    return loose ? s.start + ":" + s.end + ":" + s.label : s.start + ":" + s.end + ":" + s.label + ":" + s.origin + ":" + s.status;
  }

  // Whether two span lists hold the same spans in any order; `loose` compares offsets and labels only (a
  // submission makes every span human and accepted).
  function sameSpans(a, b, loose) {
    if (a.length !== b.length) return false;
    var left = a.map(function (s) { return spanKey(s, loose); }).sort();
    var right = b.map(function (s) { return spanKey(s, loose); }).sort();
    for (var i = 0; i < left.length; i++) if (left[i] !== right[i]) return false;
    return true;
  }

  /* What to do with the kept draft `local` given the annotation on the server, `server` =
   * {id, version, state, spans}:
   *   "none"     no kept draft for this annotation;
   *   "discard"  the server holds it already (same spans), nothing to save;
   *   "save"     the server has not moved since the draft's version: the draft is newer, save it over;
   *   "rebase"   the server's next version is this browser's own unconfirmed write, and the draft was edited
   *              after it: save the draft over that version;
   *   "conflict" the record changed elsewhere (or was submitted, or the server is behind the draft): never
   *              overwrite it silently, a person chooses.
   */
  function recoveryAction(local, server) {
    if (!local || local.annotation !== server.id) return "none";
    if (server.state === "submitted") return sameSpans(local.spans, server.spans, true) ? "discard" : "conflict";
    if (server.version === local.version) {
      return sameSpans(local.spans, server.spans, false) && !local.activeSeconds ? "discard" : "save";
    }
    if (server.version > local.version) {
      if (sameSpans(local.spans, server.spans, false)) return "discard";
      var own = local.unconfirmed.some(function (w) {
        return !w.submit && server.version === w.version + 1 && sameSpans(w.spans, server.spans, false);
      });
      if (own) return "rebase";
    }
    return "conflict";
  }

  // The sentence shown with a conflict; `local` and `server` as for recoveryAction.
  function conflictText(local, server) {
    var versions = { local: local.version, server: server.version };
    if (server.state === "submitted") {
      return interpolate(gettext("This browser kept a draft of this record that never reached the server (edited from version %(local)s), but the record has since been submitted (version %(server)s) and can no longer change here. Nothing was overwritten."), versions, true);
    }
    if (server.version < local.version) {
      return interpolate(gettext("This browser kept a draft of this record that never reached the server (edited from version %(local)s), but the server is back at an older version (%(server)s). Nothing was overwritten: choose which to keep."), versions, true);
    }
    return interpolate(gettext("This browser kept a draft of this record that never reached the server (edited from version %(local)s), but the record has changed since (now version %(server)s). Nothing was overwritten: choose which to keep."), versions, true);
  }

  var api = {
    BACKOFF_MS: BACKOFF_MS, retryDelayMs: retryDelayMs, isOutage: isOutage, draftKey: draftKey,
    wireSpan: wireSpan, draftRecord: draftRecord, withUnconfirmed: withUnconfirmed, parseDraft: parseDraft,
    sameSpans: sameSpans,
    recoveryAction: recoveryAction, conflictText: conflictText,
  };
  if (root) root.deidloopDrafts = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : null);
