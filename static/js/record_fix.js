// The fix page: text selected in the record fills the new span's start and end (in characters, as the server
// counts them: code points, not UTF-16 units).
(function () {
  "use strict";
  var text = document.getElementById("fix-text");
  var row = document.getElementById("fix-new");
  if (!text || !row) return;
  var start = row.querySelector("input[name$='-start']");
  var end = row.querySelector("input[name$='-end']");
  var shown = document.getElementById("fix-selection");

  function length(value) { return Array.from(value).length; }

  function choose() {
    var selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    var range = selection.getRangeAt(0);
    if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) return;
    var before = document.createRange();
    before.selectNodeContents(text);
    before.setEnd(range.startContainer, range.startOffset);
    var chosen = range.toString();
    var from = length(before.toString());
    var trimmed = chosen.replace(/^\s+/, "");
    from += length(chosen) - length(trimmed);
    trimmed = trimmed.replace(/\s+$/, "");
    if (!trimmed) return;
    start.value = from;
    end.value = from + length(trimmed);
    shown.textContent = interpolate(gettext("new span: “%s”"), [trimmed]);
  }

  text.addEventListener("mouseup", choose);
  text.addEventListener("keyup", choose);
})();
