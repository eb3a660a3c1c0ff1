"""The documentation site, built and opened in a real browser, as a newcomer would.

``.ci/run`` builds the site (``python -m sphinx -W --keep-going -b html docs docs/_build/html``)
before the system leg; this module reads that build (or the one ``SCWO_NP_DOCS_HTML`` names),
serves it on 127.0.0.1 and opens pages in headless Chromium (Debian's package, installed by
``.ci/chromium``, never by a test). It fails on a page with no title, a page whose style
sheets did not apply, a figure that does not load, or any asset fetched from another host.
The checks are shown able to fail: the same page with its style sheets removed, and with an
image whose file is missing, must be caught. Screenshots are kept in
``docs/_build/screenshots`` to be looked at.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from test_asv_history import FLAGS, _find_chromium

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("SCWO_NP_DOCS_HTML", ROOT / "docs" / "_build" / "html"))
SHOTS = HTML.parent / "screenshots"
API_PAGE = "api/generated/scwo_np.select.mmr_select.html"

# After load: the images that did not load, and whether the theme's style sheet applied
# (the pydata theme gives the header a fixed position; without CSS it is static).
PROBE = """<script>
window.addEventListener("load", function () {
  var bad = Array.prototype.filter.call(document.images, function (i) {
    return !(i.complete && i.naturalWidth > 0);
  }).map(function (i) { return i.getAttribute("src"); });
  var header = document.querySelector("header, .bd-header");
  var pos = header ? getComputedStyle(header).position : "none";
  var probe = document.createElement("div");
  probe.id = "scwo-probe";
  probe.setAttribute("data-broken", bad.join(" "));
  probe.setAttribute("data-images", String(document.images.length));
  probe.setAttribute("data-header-position", pos);
  document.body.appendChild(probe);
});
</script>"""


def _require(what: str, hint: str):
    if os.environ.get("SCWO_NP_REQUIRE_EXTRAS") == "1":
        pytest.fail(f"{what} is missing: {hint}")
    pytest.skip(f"needs {what}: {hint}")


@pytest.fixture(scope="module")
def chromium() -> str:
    path = _find_chromium()
    if path is None:
        _require("Chromium", ".ci/run installs it with `bash .ci/chromium` (as root)")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A copy of the built site (probed pages are added to it), served on 127.0.0.1."""
    if not (HTML / "index.html").is_file():
        _require("the built site", "python -m sphinx -W --keep-going -b html docs docs/_build/html")
    work = tmp_path_factory.mktemp("site") / "html"
    shutil.copytree(HTML, work)
    handler = functools.partial(_Quiet, directory=str(work))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", work
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _probed(work: Path, page: str, *, strip_css: bool = False, extra: str = "") -> str:
    """A copy of ``page`` beside it with the probe (and optionally without its style sheets)."""
    text = (work / page).read_text(encoding="utf-8")
    if strip_css:
        text = re.sub(r'<link\b[^>]*\brel="stylesheet"[^>]*>', "", text)
        text = re.sub(r"<style[^>]*>.*?</style>", "", text, flags=re.S)
    text = text.replace("</body>", extra + PROBE + "</body>")
    name = str(Path(page).with_name(Path(page).stem + ".probe.html"))
    (work / name).write_text(text, encoding="utf-8")
    return name


def _open(chromium: str, base: str, page: str, tmp_path: Path, shot_name: str) -> tuple[dict, str, Path]:
    """Load ``page``: (the probe's attributes, the DOM after the scripts ran, the screenshot)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{shot_name}.png"
    args = [chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    r = subprocess.run(
        [*args, f"--screenshot={shot}", f"{base}/{page}"], capture_output=True, text=True, timeout=120
    )
    assert shot.is_file(), r.stderr[-3000:]
    d = subprocess.run([*args, "--dump-dom", f"{base}/{page}"], capture_output=True, text=True, timeout=120)
    m = re.search(r'<div id="scwo-probe"([^>]*)>', d.stdout)
    probe = dict(re.findall(r'data-([\w-]+)="([^"]*)"', m.group(1))) if m else {}
    return probe, d.stdout, shot


def _ink(shot: Path) -> tuple[int, int]:
    """(pixels that are not near-white, pixels with colour) of a screenshot."""
    from PIL import Image

    rgb = np.asarray(Image.open(shot).convert("RGB")).astype(np.int16)
    return int((rgb.min(axis=2) < 200).sum()), int(((rgb.max(axis=2) - rgb.min(axis=2)) > 60).sum())


def test_no_page_loads_anything_from_another_host():
    if not (HTML / "index.html").is_file():
        _require("the built site", "python -m sphinx -W --keep-going -b html docs docs/_build/html")
    pages = list(HTML.rglob("*.html"))
    assert len(pages) > 100  # the guides, the gallery and one page per public name
    for page in pages:
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r"<(?:script|link|img)\b[^>]*(?:src|href)=\"(https?://[^\"]+)\"", text)
        assert not remote, f"{page.relative_to(HTML)} loads {remote[:3]}"


def test_every_public_name_has_its_page():
    import importlib
    import sys

    sys.path.insert(0, str(ROOT / "docs"))
    import apipages

    if not (HTML / "index.html").is_file():
        _require("the built site", "python -m sphinx -W --keep-going -b html docs docs/_build/html")
    homes = apipages.canonical_homes()
    missing = []
    for modname, _, _ in apipages.PACKAGES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            home = homes[id(getattr(mod, name))]
            if not (HTML / "api" / "generated" / f"{home}.{name}.html").is_file():
                missing.append(f"{modname}.{name}")
    assert not missing, missing


def test_the_front_page_has_its_title_styles_and_content(chromium, site, tmp_path):
    base, work = site
    probe, dom, shot = _open(chromium, base, _probed(work, "index.html"), tmp_path, "index")
    assert re.search(r"<title>[^<]*scwo_np[^<]*</title>", dom), dom[:500]
    assert "decides what goes into an LLM" in dom
    assert probe.get("header-position") in ("sticky", "fixed"), probe  # the theme's CSS applied
    ink, colour = _ink(shot)
    assert ink > 20_000 and colour > 500, (
        f"{shot}: the page looks blank ({ink} dark, {colour} coloured pixels)"
    )


def test_a_page_without_its_style_sheets_is_caught(chromium, site, tmp_path):
    base, work = site
    probe, _, _ = _open(chromium, base, _probed(work, "index.html", strip_css=True), tmp_path, "index-nocss")
    assert probe.get("header-position") == "static", probe


def test_an_api_page_shows_the_function_and_its_sections(chromium, site, tmp_path):
    base, work = site
    probe, dom, shot = _open(chromium, base, _probed(work, API_PAGE), tmp_path, "api-mmr_select")
    assert re.search(r"<title>[^<]*mmr_select[^<]*</title>", dom)
    for section in ("Parameters", "Returns", "Examples"):
        assert section in dom, section
    assert probe.get("header-position") in ("sticky", "fixed"), probe
    ink, _ = _ink(shot)
    assert ink > 20_000, f"{shot}: the page looks blank"


def test_the_gallery_figures_load(chromium, site, tmp_path):
    base, work = site
    pages = sorted(
        p.relative_to(work).as_posix() for p in (work / "gallery").glob("*.html") if p.stem != "index"
    )
    assert len(pages) >= 6, pages
    figures = 0
    for page in pages:
        probe, _, _ = _open(chromium, base, _probed(work, page), tmp_path, "gallery-" + Path(page).stem)
        assert probe, f"{page}: the probe did not run"
        assert not probe["broken"], f"{page}: figures that did not load: {probe['broken']}"
        figures += int(probe["images"])
    assert figures >= 6, figures


def test_a_figure_that_does_not_load_is_caught(chromium, site, tmp_path):
    base, work = site
    page = _probed(work, "index.html", extra='<img src="_static/no-such-figure.png" alt="missing">')
    probe, _, _ = _open(chromium, base, page, tmp_path, "index-broken-figure")
    assert probe.get("broken") == "_static/no-such-figure.png", probe
