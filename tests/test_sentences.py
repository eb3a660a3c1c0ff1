"""The sentence splitter and the units of sentence-level selection (scwo_np._sentences)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scwo_np._sentences import sentence_units, split_sentences


def _pieces(text, fn=split_sentences):
    return [text[a:b] for a, b in fn(text)]


@pytest.mark.parametrize(
    "text, want",
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("Mr. Smith met Dr. Jones at 3.30 p.m. on Jan. 5. They talked.",
         ["Mr. Smith met Dr. Jones at 3.30 p.m. on Jan. 5.", "They talked."]),
        ("See e.g. the docs, i.e. section 2. Then stop.", ["See e.g. the docs, i.e. section 2.", "Then stop."]),
        ("Pi is 3.14159. Version 3.12.1 is out.", ["Pi is 3.14159.", "Version 3.12.1 is out."]),
        ("J. R. R. Tolkien wrote it. Smith et al. agree.", ["J. R. R. Tolkien wrote it.", "Smith et al. agree."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("Call `os.path.join(a. B)` now. Done.", ["Call `os.path.join(a. B)` now.", "Done."]),
        ("Wait... what? Yes.", ["Wait... what?", "Yes."]),
        ("It costs $5 (approx. 4 EUR). Fine.", ["It costs $5 (approx. 4 EUR).", "Fine."]),
        ("Sentences end here.\n\nA new paragraph", ["Sentences end here.", "A new paragraph"]),
    ],
)  # fmt: skip
def test_prose(text, want):
    assert _pieces(text) == want


def test_code_blocks_are_one_span_each():
    fenced = "Run this:\n\n```python\nx = 1. \ny = 2. Z = 3\n\nprint(x)\n```\nAfter."
    assert _pieces(fenced) == ["Run this:", "```python\nx = 1. \ny = 2. Z = 3\n\nprint(x)\n```", "After."]
    doctest = "Example:\n>>> x = 1. \n>>> x\n1.0\n\nText after."
    assert _pieces(doctest) == ["Example:", ">>> x = 1. \n>>> x\n1.0", "Text after."]
    literal = "The code is::\n\n    a = 1. B = 2\n\n    c = 3\n\nProse again."
    assert _pieces(literal) == ["The code is::", "a = 1. B = 2\n\n    c = 3", "Prose again."]


def test_list_items_and_line_structured_text():
    items = "Options:\n- fast. Really fast\n- exact\n  with a second line\n1) numbered"
    assert _pieces(items) == [
        "Options:",
        "- fast.",
        "Really fast",
        "- exact\n  with a second line",
        "1) numbered",
    ]
    log = ("2024-05-01 10:00:01 INFO started\n2024-05-01 10:00:02 WARN disk at 91%\n"
           "2024-05-01 10:00:03 ERROR write failed")  # fmt: skip
    assert len(_pieces(log)) == 3
    verse = "Shall I compare thee to a summer's day\nThou art more lovely and more temperate\nRough winds do shake"
    assert len(_pieces(verse)) == 3


def test_hard_wrapped_prose_is_cut_at_its_sentences_not_its_lines():
    """dpkg's triggers spec, wrapped at 72 columns: it came back one "sentence" a line ("which is
    interested in the trigger at that time.  Each package has a")."""
    text = (
        "When a trigger is activated, it becomes pending for every package\n"
        "which is interested in the trigger at that time.  Each package has a\n"
        "list of zero or more pending triggers.  Repeated activation of the\n"
        "same trigger has no additional effect.  Note that in general a trigger\n"
        "will not be processed immediately when it is activated; processing is\n"
        "deferred until it is convenient (as described below).\n"
    )
    got = [" ".join(p.split()) for p in _pieces(text)]
    assert got == [
        "When a trigger is activated, it becomes pending for every package which is interested in the "
        "trigger at that time.",
        "Each package has a list of zero or more pending triggers.",
        "Repeated activation of the same trigger has no additional effect.",
        "Note that in general a trigger will not be processed immediately when it is activated; processing "
        "is deferred until it is convenient (as described below).",
    ]
    log = "".join(
        f"2026-11-27 10:00:{i:02d} status installed libfoo{i}:amd64 1.{i} and more words\n" for i in range(6)
    )
    assert len(_pieces(log)) == 6  # lines that start their own record stay lines


def test_a_wrapped_description_under_key_value_lines_is_cut_at_its_sentences():
    """dpkg's README.feature-removal-schedule: ``Key: value`` lines, then a description wrapped at
    72 columns and indented one space. The short keys made the paragraph "lines", and the
    description came back a line at a time ("--control-show, which are a better interface as
    they do not rely on any")."""
    text = (
        "What: --control-path (dpkg-query option)\n"
        "Status: deprecated\n"
        "When: 1.18.x\n"
        "Warning: man page\n"
        " This was a semi-public interface now superseded by --control-list and\n"
        " --control-show, which are a better interface as they do not rely on any\n"
        " specific database layout. Although there might still be cases where it's\n"
        " required to avoid hardcoding the database layout, and it will be kept as\n"
        " long as there's legitimate uses for it and no viable replacements."
    )
    got = [" ".join(p.split()) for p in _pieces(text)]
    assert got == [
        "What: --control-path (dpkg-query option)",
        "Status: deprecated",
        "When: 1.18.x",
        "Warning: man page",
        "This was a semi-public interface now superseded by --control-list and --control-show, which are a "
        "better interface as they do not rely on any specific database layout.",
        "Although there might still be cases where it's required to avoid hardcoding the database layout, "
        "and it will be kept as long as there's legitimate uses for it and no viable replacements.",
    ]
    # an indented run that is not running text (a list of names) stays lines
    names = "Copyright:\n" + "".join(f" Copyright (c) 199{i}, Person Number{i}\n" for i in range(5))
    assert len(_pieces(names)) == 6


def test_a_wrapped_paragraph_under_a_heading_or_between_debian_dots_is_prose():
    """A re-trial on /usr/share/doc: gzip's copyright gave "under the terms of the GNU Free
    Documentation License, Version 1.3 or" as a sentence (its description runs on to " ." and
    another paragraph), and adduser's README "configuration options and stating what the default
    is that adduser and" (the paragraph shares its block with a heading and its underline). A
    diffstat stays lines."""
    gfdl = (
        "License: GFDL-1.3+-no-invariant\n"
        " Permission is granted to copy, distribute and/or modify this document\n"
        " under the terms of the GNU Free Documentation License, Version 1.3 or\n"
        " any later version published by the Free Software Foundation; with no\n"
        " Invariant Sections, with no Front-Cover Texts, and with no Back-Cover\n"
        " Texts.\n"
        " .\n"
        " On Debian GNU/Linux systems, the complete text of the GNU Free Documentation\n"
        " License can be found in `/usr/share/common-licenses/GFDL-3'."
    )
    got = [" ".join(p.split()) for p in _pieces(gfdl)]
    assert got[1].startswith("Permission is granted") and got[1].endswith("Back-Cover Texts.")
    readme = (
        "Configuration files\n"
        "-------------------\n"
        "adduser and deluser have configuration files, /etc/adduser.conf and\n"
        "/etc/deluser.conf, respectively. In a freshly installed package, both\n"
        "files only contain comments, giving terse explanation about available\n"
        "configuration options and stating what the default is that adduser and\n"
        "deluser will use if not otherwise configured."
    )
    got = [" ".join(p.split()) for p in _pieces(readme)]
    assert got[-1] == (
        "In a freshly installed package, both files only contain comments, giving terse explanation about "
        "available configuration options and stating what the default is that adduser and deluser will use "
        "if not otherwise configured."
    )
    diffstat = " configure.ac        | 23 +++++++++++++++++++++-\n gen.tab/Makefile.am | 20 ++++++++++-----\n"
    diffstat += " lib/fribidi.c       | 11 +++++++----\n 3 files changed, 34 insertions(+), 11 deletions(-)"
    assert len(_pieces(diffstat)) == 4


def test_units_keep_what_a_sentence_needs():
    text = "Sets are fast. However, they are unordered. Lists keep order. Tuples hash."
    assert _pieces(text, sentence_units) == [
        "Sets are fast. However, they are unordered.", "Lists keep order.", "Tuples hash."
    ]  # fmt: skip
    intro = "Install it:\n- pip install x\n- run x\n\nDone. For example, see below."
    assert _pieces(intro, sentence_units) == [
        "Install it:\n- pip install x\n- run x",
        "Done. For example, see below.",
    ]
    assert _pieces("This starts it. Nothing before.", sentence_units) == [
        "This starts it.",
        "Nothing before.",
    ]


@pytest.mark.parametrize("text", ["", "   \n\n  ", "no boundary at all", "x" * 100_000])
def test_edge_cases(text):
    spans = split_sentences(text)
    assert all(0 <= a < b <= len(text) for a, b in spans)
    if text.strip():
        assert sentence_units(text)


def test_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="text must be a str"):
        split_sentences(b"bytes")


_TEXT = st.lists(
    st.sampled_from(list("ab Cd.!?\n`\"'()-*1:>e.g") + ["...", "Dr. ", "\n\n", "```", "    ", ">>> "]),
    max_size=80,
).map("".join)


@given(text=_TEXT)
def test_spans_cover_the_text_in_order(text):
    """Spans are in order, do not overlap, are trimmed, and leave only white space outside them."""
    spans = split_sentences(text)
    pos = 0
    for a, b in spans:
        assert pos <= a < b <= len(text)
        assert not text[pos:a].strip()
        assert text[a:b] == text[a:b].strip()
        pos = b
    assert not text[pos:].strip()
    units = sentence_units(text)
    assert [u for u in units] == sorted(units)
    assert {a for a, _ in units} <= {a for a, _ in spans} and {b for _, b in units} <= {b for _, b in spans}


# A man page as `man -P cat` prints it: sections at column 0, text indented by 7, an option's text by 14.
MAN = """NAME
       lookup - find lines in files

DESCRIPTION
       lookup reads each named file and prints the lines that hold the
       pattern.

       With no file, it reads standard input. Exit status is 0 when a line
       was found, and 1 otherwise.

OPTIONS
       -r, --recursive
              Read every file under each directory, recursively. Symbolic
              links are followed only when named on the command line. This is
              the same as the -d recurse option.

       --color=WHEN
              Mark the matches with colour. WHEN is never, always or auto;
              the default is auto.

EXAMPLES
       Find the calls of main in a tree:

           lookup -r 'main(' src/ | sort > hits.txt
"""


def test_a_man_page_is_prose_not_one_code_block():
    """Its indented paragraphs read as code: grep(1)'s option list was one span of 15,883 characters."""
    got = [MAN[a:b] for a, b in split_sentences(MAN)]
    flat = [" ".join(s.split()) for s in got]
    assert (
        "With no file, it reads standard input." in flat
        and "--color=WHEN Mark the matches with colour." in flat
    )
    assert "Read every file under each directory, recursively." in flat
    assert max(map(len, got)) < 200
    # code stays code: an indented command line (its marks), and a block a "::" announced
    assert "lookup -r 'main(' src/ | sort > hits.txt" in got
    rst = "Run this::\n\n    Read every file under each directory, recursively. Then stop here now.\n"
    assert [rst[a:b] for a, b in split_sentences(rst)][-1].startswith("Read every file") and len(
        split_sentences(rst)
    ) == 2


@pytest.mark.parametrize("label", ["b.", "aa.", "iv.", "2)", "(c)", "12."])
def test_a_list_label_starts_its_sentence(label):
    """bash's NEWS labels its items "a." to "zz.": cut off, the labels filled contexts (15 of 21 texts)."""
    text = f"{label} There is a new option to list completions. It is off by default."
    assert [text[a:b] for a, b in split_sentences(text)] == [
        f"{label} There is a new option to list completions.",
        "It is off by default.",
    ]
    other = "See item b. There it is."
    assert [other[a:b] for a, b in split_sentences(other)] == ["See item b.", "There it is."]


def test_a_text_indented_throughout_reads_as_wrapped():
    """A man page's option list was one block (ls(1): 3,441 characters, its -t inside), a paragraph
    under an option a span per line cut mid-sentence, a list of names one span of 3,362."""
    page = (
        "NAME\n       lookup - find lines\n\nOPTIONS\n"
        "       -S     sort by size, largest first\n\n"
        "       --si   likewise, but use powers of 1000 not 1024\n\n"
        "       -I pkcs11\n              Specify the shared library lookup should use to communicate\n"
        "              with a token providing keys.  It is read once.\n"
        "       comment-begin (``#'')\n              The string that is inserted first.\n\n"
        "       Options understood:\n\n           AddKeysToAgent\n           AddressFamily\n"
        "           BatchMode\n           BindAddress\n"
    ) + "       More text here that is indented like the rest of the page.\n" * 30
    got = [" ".join(page[a:b].split()) for a, b in split_sentences(page)]
    assert "-S sort by size, largest first" in got and "--si likewise, but use powers of 1000 not 1024" in got
    assert (
        "-I pkcs11 Specify the shared library lookup should use to communicate with a token providing keys."
        in got
    )
    assert "comment-begin (``#'') The string that is inserted first." in got  # a dedent starts an item
    assert {"AddKeysToAgent", "AddressFamily", "BatchMode", "BindAddress"} <= set(got)
    assert split_sentences(page, wrapped=False) != split_sentences(page)
    with pytest.raises(TypeError, match="wrapped must be True, False or None"):
        split_sentences(page, wrapped="yes")


def test_labels_of_one_letter_said_again():
    """bash's CHANGES labels items "aaa." to "zzzz." (211 bare labels came out, 'nnn.' in contexts)."""
    text = "aaa. Fixed a bug that caused the shell to crash.\n\nbbbb. The read builtin now times out.\n"
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "aaa. Fixed a bug that caused the shell to crash.",
        "bbbb. The read builtin now times out.",
    ]


# find(1) as `man -P cat find` prints it, split at its blank lines and each paragraph stripped, as a
# user does before selecting from it: the first line loses its indent.
FIND = [
    "-amin n\n              File was last accessed less than, more than or exactly n minutes\n              ago.",
    "-context pattern\n              (SELinux only) Security context of the file matches glob pat‐\n              tern.",
    "-maxdepth levels\n              Descend at most levels (a non-negative integer) levels of direc‐\n"
    "              tories  below the starting-points.  Using -maxdepth 0 means only\n"
    "              apply the tests and actions to the starting-points themselves.",
    "The cost-based optimiser has a fixed  idea  of  how  likely  any\n"
    "              given  test  is to succeed.  In some cases the probability takes\n"
    "              account of the specific nature of the test (for example, -type f\n"
    "              is  assumed  to  be  more  likely to succeed than -type c).",
]


def test_a_stripped_paragraph_of_a_man_page_reads_as_wrapped():
    """Split off and stripped, an option's paragraph read as a list of lines: its last line ("ago.",
    "tern.") was a unit of its own, and 662 of 6,795 units of 120 pages began mid-sentence (379 now)."""
    got = [[" ".join(t[a:b].split()) for a, b in split_sentences(t)] for t in FIND]
    assert got[0] == ["-amin n", "File was last accessed less than, more than or exactly n minutes ago."]
    assert got[1] == [
        "-context pattern",
        "(SELinux only) Security context of the file matches glob pat‐ tern.",
    ]
    assert got[2] == [
        "-maxdepth levels",
        "Descend at most levels (a non-negative integer) levels of direc‐ tories below the starting-points.",
        "Using -maxdepth 0 means only apply the tests and actions to the starting-points themselves.",
    ]
    # a heading is a unit with the sentence after it, never alone
    assert [" ".join(FIND[0][a:b].split()) for a, b in sentence_units(FIND[0])] == [
        "-amin n File was last accessed less than, more than or exactly n minutes ago."
    ]
    # a long first line is not a heading: its sentence goes on
    assert (
        got[3][0] == "The cost-based optimiser has a fixed idea of how likely any given test is to succeed."
    )
    # the whole page reads as before: a section's name alone, even over a short line
    page = "SEE ALSO\n       REINDEX(7)\n\nNOTES\n       Some text that goes on\n       here."
    assert [page[a:b] for a, b in split_sentences(page, wrapped=True)][:2] == ["SEE ALSO", "REINDEX(7)"]
    # code after a line at column 0 is not prose
    code = "Example:\n    x = 1\n    y = 2"
    assert split_sentences(code) == split_sentences(code, wrapped=False)
    # wrapped=True on text at column 0: cut at its sentences, not at its lines
    flat = "Bash is an sh-compatible command language\ninterpreter. It reads commands\nfrom files."
    assert [" ".join(flat[a:b].split()) for a, b in split_sentences(flat, wrapped=True)] == [
        "Bash is an sh-compatible command language interpreter.",
        "It reads commands from files.",
    ]


def test_short_lines_of_running_text_are_cut_at_their_sentences():
    """An option's text with its spaces squeezed (a new user's man page, runs of spaces made one) was
    read as a list of lines: "The default is" and "auto when stdout is a terminal." came apart; a
    licence under its ``License:`` field gave a line per span, mid-sentence."""
    opt = "--color\nColorize the output. The default is\nauto when stdout is a terminal."
    assert [opt[a:b] for a, b in split_sentences(opt)] == [
        "--color",
        "Colorize the output.",
        "The default is\nauto when stdout is a terminal.",
    ]
    assert [opt[a:b] for a, b in sentence_units(opt)][
        0
    ] == "--color\nColorize the output."  # a name, with its text
    lic = (
        "License: FSFULLR\n This file is free software; the Free Software Foundation\n gives unlimited "
        "permission to copy and/or distribute it,\n with or without modifications, as long as this notice is "
        "preserved."
    )
    got = [" ".join(lic[a:b].split()) for a, b in split_sentences(lic)]
    assert got == [
        "License: FSFULLR",
        "This file is free software; the Free Software Foundation gives unlimited permission to copy and/or "
        "distribute it, with or without modifications, as long as this notice is preserved.",
    ]
    # lists, tables and titles over an underline stay lines
    for listed in (
        "ls - list directory contents\ncp - copy files\nmv - move files.",
        "root 1 0.0 0.1 init\nroot 2 0.0 0.0 kthreadd\nuser 3 0.0 0.0 bash.",
        "Port assignment\n---------------\nPlease note that the tools manage the ports\nof every cluster.",
    ):
        assert len(split_sentences(listed)) >= 3, listed
