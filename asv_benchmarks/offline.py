"""Make asv's published HTML work without the internet.

``asv publish`` (0.6) writes pages that load jQuery, flot, Bootstrap, stupidtable and
blueimp-md5 from three CDNs.  Behind a firewall, on an air-gapped runner, or here, those
pages are blank: ``$`` is undefined and nothing draws.  This script swaps every CDN
reference for a copy under ``html/vendor/``:

    cd asv_benchmarks && asv publish && python offline.py --fetch html

The copies go to ``www_vendor/`` (MIT-licensed; see ``www_vendor/README.md``), fetched
from the npm registry, the only place besides PyPI and Debian a maintainer here can
download from, by ``--fetch`` when publishing; they are not committed (480 kB of
minified JavaScript).  Where the npm file is the
very file asv pins (its Subresource Integrity hash matches), the fetch checks that hash;
flot 0.8.3 ships unminified on npm and stupidtable only as 1.1.3 (asv pins cdnjs's 1.0.1
build; the plugin's API is the same), so those two are checked by their own hashes in
``MANIFEST`` instead.  Every rewritten tag carries the SHA-256 of the file it now loads.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import re
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "www_vendor"
REGISTRY = "https://registry.npmjs.org"

#: CDN address in asv's pages -> (npm package, version, file in the tarball, local name).
MANIFEST = {
    "https://code.jquery.com/jquery-3.3.1.min.js": ("jquery", "3.3.1", "dist/jquery.min.js", "jquery.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js": (
        "flot", "0.8.3", "jquery.flot.js", "jquery.flot.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js": (
        "flot", "0.8.3", "jquery.flot.time.js", "jquery.flot.time.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js": (
        "flot", "0.8.3", "jquery.flot.selection.js", "jquery.flot.selection.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js": (
        "flot", "0.8.3", "jquery.flot.categories.js", "jquery.flot.categories.js",
    ),
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js": (
        "flot-orderbars", "1.0.0", "js/jquery.flot.orderBars.js", "jquery.flot.orderBars.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js": (
        "stupid-table-plugin", "1.1.3", "stupidtable.min.js", "stupidtable.min.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js": (
        "blueimp-md5", "2.19.0", "js/md5.min.js", "md5.min.js",
    ),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js": (
        "bootstrap", "3.1.1", "dist/js/bootstrap.min.js", "bootstrap.min.js",
    ),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css": (
        "bootstrap", "3.1.1", "dist/css/bootstrap.min.css", "css/bootstrap.min.css",
    ),
}  # fmt: skip
#: Files a vendored file refers to (Bootstrap's CSS loads its icon font from ../fonts/).
EXTRA = [
    (
        "bootstrap",
        "3.1.1",
        f"dist/fonts/glyphicons-halflings-regular.{ext}",
        f"fonts/glyphicons-halflings-regular.{ext}",
    )
    for ext in ("ttf", "woff")
]
#: SHA-256 of the files whose npm copy is not the file asv pins (checked on --fetch).
PINNED = {
    "jquery.flot.js": "b7b931f273c38b1277b9c6c1f4e05c4ec09885a487bddaf3279e2d7e49a38e12",
    "jquery.flot.time.js": "a582c832adc7138a6b05aaf61f16ebac274701f1be4afea77e739a1c34b9c41a",
    "jquery.flot.selection.js": "e6c85f6c1ebe4b4da29d8ae238c7c5060283f05f7ef054f6b91817d02c092918",
    "jquery.flot.categories.js": "6e81664b28ea795c734906f4aa15614640a75ac7fbd399a7fb9084040698351a",
    "stupidtable.min.js": "4642380f28ebe9ed7cac251793b281ef8620c4386205d92788f9b12f5cceb4e0",
}
_TAG = re.compile(r"<(script|link)\b[^>]*?(?:src|href)=\"(https?://[^\"]+)\"[^>]*>", re.IGNORECASE)


def sri(data: bytes) -> str:
    """A Subresource Integrity value (sha256) for ``data``."""
    return "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode()


def localize(html_dir: str | Path) -> int:
    """Rewrite every page under ``html_dir`` to load the vendored copies; returns tags rewritten.

    Raises ``RuntimeError`` naming the address if a page loads anything from the network that
    this script does not know (a newer asv added a library: add it to ``MANIFEST``).
    """
    html_dir = Path(html_dir)
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"{html_dir}/index.html not found: run `asv publish` first")
    missing = [name for *_, name in [*MANIFEST.values(), *EXTRA] if not (VENDOR / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"vendored files missing from {VENDOR}: {missing} (python offline.py --fetch)"
        )
    shutil.copytree(
        VENDOR, html_dir / "vendor", dirs_exist_ok=True, ignore=shutil.ignore_patterns("README.md")
    )
    done = 0
    for page in sorted(html_dir.glob("*.html")):
        text = page.read_text()

        def swap(m: re.Match, page=page) -> str:
            nonlocal done
            url = m.group(2)
            if url not in MANIFEST:
                raise RuntimeError(f"{page.name} loads {url}, which offline.py does not vendor")
            local = MANIFEST[url][3]
            tag = m.group(0).replace(url, f"vendor/{local}")
            tag = re.sub(r'\sintegrity="[^"]*"', f' integrity="{sri((VENDOR / local).read_bytes())}"', tag)
            done += 1
            return tag

        page.write_text(_TAG.sub(swap, text))
    return done


def fetch() -> None:
    """Rebuild ``www_vendor/`` from the npm registry, checking each file's hash."""
    tarballs: dict[tuple[str, str], tarfile.TarFile] = {}
    pinned_by_asv = _asv_pins()
    for url, (pkg, version, member, local) in [*MANIFEST.items(), *[(None, e) for e in EXTRA]]:
        key = (pkg, version)
        if key not in tarballs:
            name = pkg.rsplit("/", 1)[-1]
            with urllib.request.urlopen(f"{REGISTRY}/{pkg}/-/{name}-{version}.tgz", timeout=60) as r:
                tarballs[key] = tarfile.open(fileobj=io.BytesIO(r.read()), mode="r:gz")
        data = tarballs[key].extractfile(f"package/{member}").read()
        if local in PINNED:
            if hashlib.sha256(data).hexdigest() != PINNED[local]:
                raise RuntimeError(
                    f"{pkg}@{version}/{member} changed: sha256 {hashlib.sha256(data).hexdigest()}"
                )
        elif url and not _matches(data, pinned_by_asv.get(url, "")):
            raise RuntimeError(f"{pkg}@{version}/{member} is not the file asv pins for {url}")
        out = VENDOR / local
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)


def vendored() -> bool:
    """Whether every file the pages need is in ``www_vendor/``."""
    return all((VENDOR / name).is_file() for *_, name in [*MANIFEST.values(), *EXTRA])


def _asv_pins() -> dict[str, str]:
    """CDN address -> integrity value, from the index.html of the installed asv."""
    import asv

    text = (Path(asv.__file__).parent / "www" / "index.html").read_text()
    pins = {}
    for m in _TAG.finditer(text):
        integrity = re.search(r'integrity="([^"]+)"', m.group(0))
        if integrity:
            pins[m.group(2)] = integrity.group(1)
    return pins


def _matches(data: bytes, integrity: str) -> bool:
    algo, _, digest = integrity.partition("-")
    return bool(digest) and base64.b64encode(hashlib.new(algo, data).digest()).decode() == digest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html_dir", nargs="?", help="asv's html_dir to rewrite (e.g. html)")
    ap.add_argument("--fetch", action="store_true", help="rebuild www_vendor/ from the npm registry")
    args = ap.parse_args(argv)
    if args.fetch:
        fetch()
    if args.html_dir:
        n = localize(args.html_dir)
        sys.stderr.write(f"offline: {n} tags now load from {args.html_dir}/vendor/\n")
    elif not args.fetch:
        ap.error("give the html directory to rewrite, or --fetch")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
