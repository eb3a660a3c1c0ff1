"""The asv history, published and opened in a real browser.

``.ci/history --snapshot`` ran ``asv run`` over 20 commits of main (each built in its own
virtualenv) and committed asv's results under ``asv_benchmarks/history/results``.  Here
``asv publish`` turns them into the HTML site, ``asv_benchmarks/offline.py`` points its
script tags at the vendored libraries (asv's pages load them from CDNs otherwise), a local
HTTP server serves it (the pages load their data with XHR, which browsers refuse on
file://), and headless Chromium (Debian's package; ``.ci/chromium`` installs it, and this
module does so itself when run as root) loads the summary grid and one benchmark's page,
takes screenshots, and reports every console message.  The graphs must be drawn (coloured
plot lines in the screenshot, flot's canvases in the DOM) and the console must stay
silent; a page with a deliberate error shows that the console check can fail.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
ASV = ROOT / "asv_benchmarks"
SNAPSHOT = ASV / "history" / "results"
BENCHMARK_PAGE = "select.mmr.Floor.track_time_over_gemv"
# The chromium switches for a headless run in a container: no sandbox (root), no GPU, no
# /dev/shm (small in containers), nothing fetched in the background.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--disable-background-networking", "--disable-extensions", "--disable-sync",
    "--disable-component-update", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
    "--window-size=1280,1000", "--virtual-time-budget=15000",
]  # fmt: skip


def _find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium, which ``.ci/run`` installs (``.ci/chromium``); a test never installs it."""
    path = _find_chromium()
    if path is None:
        if os.environ.get("SCWO_NP_REQUIRE_EXTRAS") == "1":
            pytest.fail("Chromium is missing: .ci/run installs it with `bash .ci/chromium` before this leg")
        pytest.skip("needs Chromium: run `sudo bash .ci/chromium` (Debian's chromium package)")
    return path


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _snapshot_commits() -> set[str]:
    return {
        json.loads(p.read_text())["commit_hash"]
        for p in SNAPSHOT.glob("*/*.json")
        if p.name != "machine.json" and "-existing-" not in p.name
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The snapshot published and made offline, served on 127.0.0.1; yields (base URL, html dir)."""
    work = tmp_path_factory.mktemp("asv_site")
    conf = json.loads(re.sub(r"^\s*//.*$", "", (ASV / "asv.conf.json").read_text(), flags=re.M))
    # HEAD rather than "main": a clone checked out at a commit has no local main branch.
    conf.update(repo=str(ROOT), branches=["HEAD"], benchmark_dir=str(ASV / "benchmarks"),
                results_dir=str(work / "results"), html_dir=str(work / "html"), env_dir=str(work / "env"))  # fmt: skip
    (work / "asv.conf.json").write_text(json.dumps(conf))
    shutil.copytree(SNAPSHOT, work / "results")
    env = {**os.environ, "HOME": str(work)}
    res = subprocess.run(
        [sys.executable, "-m", "asv", "publish"], cwd=work, env=env, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
    sys.path.insert(0, str(ASV))
    import offline

    if not offline.vendored():
        if os.environ.get("SCWO_NP_REQUIRE_EXTRAS") == "1":
            pytest.fail(
                "asv's web libraries are missing: .ci/run fetches them (python asv_benchmarks/offline.py --fetch)"
            )
        pytest.skip("needs asv's web libraries: python asv_benchmarks/offline.py --fetch (npm registry)")
    res = subprocess.run(
        [sys.executable, str(ASV / "offline.py"), "html"], cwd=work, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    handler = functools.partial(_Quiet, directory=str(work / "html"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", work / "html"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test reports what matters itself
        pass


def _open(chromium: str, url: str, tmp_path: Path, what: str) -> tuple[list[str], str, Path]:
    """Load ``url``; return (console messages, DOM after the scripts ran, screenshot path)."""
    shot = tmp_path / f"{what}.png"
    args = [chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    r = subprocess.run([*args, f"--screenshot={shot}", url], capture_output=True, text=True, timeout=120)
    assert shot.is_file(), r.stderr[-3000:]
    d = subprocess.run([*args, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    console = [line for line in (r.stderr + d.stderr).splitlines() if ":CONSOLE" in line]
    return console, d.stdout, shot


def _plot_pixels(shot: Path) -> int:
    """Saturated (coloured) pixels: asv's plot lines; text and frames are grey or black."""
    from PIL import Image

    rgb = np.asarray(Image.open(shot).convert("RGB")).astype(np.int16)
    return int(((rgb.max(axis=2) - rgb.min(axis=2)) > 60).sum())


def test_the_snapshot_is_20_commits_of_this_history():
    commits = _snapshot_commits()
    assert len(commits) >= 20, f"{len(commits)} commits in {SNAPSHOT} (run .ci/history --snapshot)"
    shallow = _git("rev-parse", "--is-shallow-repository").strip() == "true"
    missing = [c for c in commits if subprocess.run(["git", "cat-file", "-e", c], cwd=ROOT).returncode != 0]
    assert not missing, f"{len(missing)} snapshot commits are not in this clone" + (
        " (a shallow clone: git fetch --unshallow)" if shallow else ""
    )
    for c in commits:
        assert subprocess.run(["git", "merge-base", "--is-ancestor", c, "HEAD"], cwd=ROOT).returncode == 0


def test_offline_pages_load_nothing_from_the_network(site):
    _, html = site
    pages = list(html.glob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert not re.search(r"<(script|link)\b[^>]*(src|href)=\"https?://", text), page.name
        for m in re.finditer(r'src="(vendor/[^"]+)" integrity="sha256-([^"]+)"', text):
            digest = base64.b64encode(hashlib.sha256((html / m.group(1)).read_bytes()).digest()).decode()
            assert digest == m.group(2), m.group(1)


def test_the_summary_grid_draws_the_history(chromium, site, tmp_path):
    base, _ = site
    console, dom, shot = _open(chromium, f"{base}/index.html", tmp_path, "grid")
    assert not console, "\n".join(console)
    assert dom.count('class="benchmark-plot"') >= 10, dom[:2000]
    assert dom.count("flot-base") >= 4, "no plot was drawn"
    # One commit's results draw no line: the page then has ~600 coloured pixels (the
    # header's links); twenty commits draw a line in every plot in view.
    assert _plot_pixels(shot) > 5_000, f"{shot}: the plots look empty"


def test_a_benchmark_page_draws_its_graph(chromium, site, tmp_path):
    base, _ = site
    console, dom, shot = _open(chromium, f"{base}/index.html#{BENCHMARK_PAGE}", tmp_path, "graph")
    assert not console, "\n".join(console)
    assert "No graphs to load" not in dom
    assert 'id="main-graph"' in dom and "flot-base" in dom, dom[:2000]
    assert _plot_pixels(shot) > 2_000, f"{shot}: the graph looks empty"


def test_the_console_check_sees_a_script_error(chromium, site, tmp_path):
    base, html = site
    (html / "broken.html").write_text("<html><body><script>nope.boom()</script></body></html>")
    console, _, _ = _open(chromium, f"{base}/broken.html", tmp_path, "broken")
    assert any("nope is not defined" in line for line in console), console
