"""What a browser would post from a page's form, read from the page's HTML: tests then change a few fields and
post the rest as shown, like a person who edits one setting."""
from __future__ import annotations

from html.parser import HTMLParser


class _FormReader(HTMLParser):
    def __init__(self, form_class: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_class = form_class
        self.inside = False
        self.values: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None
        self._first_option: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.form_class in (attrs.get("class") or "").split():
            self.inside = True
        if not self.inside:
            return
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") != "file":
            if attrs.get("type") not in ("checkbox", "radio") or "checked" in attrs:
                self.values[name] = attrs.get("value") or ("on" if attrs.get("type") == "checkbox" else "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.values[name] = ""
        elif tag == "select" and name:
            self._select, self._first_option = name, None
        elif tag == "option" and self._select:
            value = attrs.get("value", "")
            if self._first_option is None:
                self._first_option = value
            if "selected" in attrs:
                self.values[self._select] = value

    def handle_data(self, data):
        if self._textarea:
            self.values[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea" and self._textarea:
            # The parser keeps the newline a browser drops after <textarea>.
            self.values[self._textarea] = self.values[self._textarea].removeprefix("\n")
            self._textarea = None
        elif tag == "select" and self._select:
            self.values.setdefault(self._select, self._first_option or "")
            self._select = None


def form_values(html: str, form_class: str) -> dict[str, str]:
    """The fields of the form with ``form_class`` as a browser posts them unchanged (files left out)."""
    reader = _FormReader(form_class)
    reader.feed(html)
    reader.close()
    return reader.values
