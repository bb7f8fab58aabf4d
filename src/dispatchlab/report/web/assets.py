"""The page's style sheet and script (``page.css``, ``page.js`` beside this module), and
plotly.js written once beside the page."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

#: plotly.js, written beside ``index.html`` (no CDN: the report works offline).
PLOTLY_FILE = "plotly.min.js"


def _text(name: str) -> str:
    return (resources.files("dispatchlab.report.web") / name).read_text(encoding="utf-8")


#: The style sheet inlined in the page.
CSS = _text("page.css")

#: Draws every figure, links the time axes, sorts tables, switches tabs; records when the
#: page's first figures are all drawn (``window.reportRenderedAt``, ms since navigation
#: start; ``body[data-rendered]``).
SCRIPT = _text("page.js")


def write_plotly(folder: Path) -> Path:
    """plotly.js beside the page (rewritten only when it differs)."""
    from plotly.offline import get_plotlyjs

    path = folder / PLOTLY_FILE
    text = get_plotlyjs()
    if not path.is_file() or path.stat().st_size != len(text.encode()):
        from dispatchlab.atomic_output import atomic_output

        with atomic_output(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return path
