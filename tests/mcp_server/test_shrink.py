"""The proxy's per-call logic as plain functions (issue 44): a text within the budget by its shape,
a result's structured content kept consistent or dropped with a note, the config file checked."""

from __future__ import annotations

import json
import os
import sys

import pytest
import toon_format
from mcp_types import CallToolResult, ImageContent, TextContent

from scwo_np.anchor import CrushStore, crush_json
from scwo_np.mcp_server._proxy import ProxyConfig, ToolConfig, config_from_dict, read_config
from scwo_np.mcp_server._shrink import shrink_result
from scwo_np.shrink import MODES, shrink_text
from scwo_np.tokens import count_tokens

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "shrink"))
from shrink_samples import LOG, PROSE, ROWS  # noqa: E402
from shrink_samples import tokens as _tokens  # noqa: E402


def test_toon_when_it_is_the_cheapest_lossless_form():
    """Rows whose strings read as numbers (CSV cannot hold them): TOON is the cheapest, and reads back."""
    rows = [
        {"zip": f"{i * 7919 % 100000:05d}", "city": ["Boston", "Quincy", "Salem"][i % 3], "pop": i * 37}
        for i in range(80)
    ]
    s = shrink_text(json.dumps(rows, indent=2), _tokens(json.dumps(rows, separators=(",", ":"))) - 1)
    assert s.form == "toon" and s.kept == s.of == 80 and s.key is None
    assert toon_format.loads(s.text) == rows and s.text.startswith("[80]{zip,city,pop}:")
    # a value TOON cannot hold (NaN, which JSON texts may carry): never TOON
    nan = [{**r, "pop": float("nan") if i == 3 else r["pop"]} for i, r in enumerate(rows)]
    s = shrink_text(json.dumps(nan, indent=2), _tokens(json.dumps(nan, separators=(",", ":"))) - 1)
    assert s.form != "toon"


def test_an_indented_tree_gets_toon_when_it_is_cheaper_than_compact_json():
    """findmnt -J (a tree indented by 3): 1,232 tokens, 541 compact, TOON 532; at budgets of 541 to
    649 the compact form came back, TOON's size estimated from the indented text's and not built;
    here (583 tokens, 279 compact, TOON 171) a budget of 171 crushed the tree, dropping mounts."""
    mounts = [
        {"target": f"/srv/vol{i}", "source": f"/dev/sd{'abc'[i % 3]}{i}", "fstype": ["ext4", "xfs"][i % 2],
         "options": "rw,relatime" if i % 4 else "ro,nosuid,nodev"}
        for i in range(12)
    ]  # fmt: skip
    tree = {"filesystems": [{"target": "/", "source": "/dev/sda1", "fstype": "ext4", "options": "rw",
                             "children": mounts}]}  # fmt: skip
    compact, toon = _tokens(json.dumps(tree, separators=(",", ":"))), _tokens(toon_format.dumps(tree))
    assert toon < compact
    # before: crushed at the first budget (mounts lost), the columnar form at the second
    for budget in (toon, toon + 30, compact):
        s = shrink_text(json.dumps(tree, indent=3), budget)
        assert s.form == "toon" and s.tokens < compact and toon_format.loads(s.text) == tree, budget


def test_a_result_within_budget_is_the_same_object_and_an_error_is_held_to_the_budget():
    r = CallToolResult(content=[TextContent(type="text", text="short")])
    assert shrink_result(r, 100) == (r, None)
    small_err = CallToolResult(content=[TextContent(type="text", text="no such file")], is_error=True)
    assert shrink_result(small_err, 100) == (small_err, None)
    err = CallToolResult(content=[TextContent(type="text", text=LOG)], is_error=True)
    out, s = shrink_result(err, 100)
    assert out.is_error and s.form == "records" and _tokens(out.content[0].text) <= 100
    assert "ERROR boom 100" in out.content[0].text
    big = CallToolResult(content=[TextContent(type="text", text=LOG)])
    assert shrink_result(big, 100, mode="off")[0] is big


def test_structured_content_follows_the_text_or_is_dropped_with_a_note():
    doc = {"table": "t", "rows": ROWS}
    r = CallToolResult(content=[TextContent(type="text", text=json.dumps(doc))], structured_content=doc)
    out, s = shrink_result(r, 300)
    assert out.structured_content == json.loads(out.content[0].text)  # the crushed JSON, consistent
    assert "kept" in out.meta["scwo_np/proxy"]["structured_content"]
    r = CallToolResult(content=[TextContent(type="text", text=LOG)], structured_content={"lines": 600})
    out, s = shrink_result(r, 300)
    assert out.structured_content is None and "dropped" in out.meta["scwo_np/proxy"]["structured_content"]
    assert "left out" in out.meta["scwo_np/proxy"]["structured_content"]
    # a lossless form (TOON here) holds everything: the note does not speak of what was left out
    rows = [{"zip": f"{i:05d}", "city": "Lima"} for i in range(200)]
    r = CallToolResult(
        content=[TextContent(type="text", text=json.dumps(rows, indent=2))], structured_content={"rows": rows}
    )
    out, s = shrink_result(r, 1200)
    note = out.meta["scwo_np/proxy"]["structured_content"]
    assert (
        s.form in ("compact", "lossless", "csv", "toon")
        and "whole, in a shorter form" in note
        and "left out" not in note
    )


def test_other_blocks_stay_and_text_blocks_become_one_within_budget():
    img = ImageContent(type="image", data="aGVsbG8=", mime_type="image/png")
    r = CallToolResult(
        content=[TextContent(type="text", text=LOG[:9000]), img, TextContent(type="text", text=LOG[9000:])]
    )
    out, s = shrink_result(r, 200)
    texts = [c for c in out.content if isinstance(c, TextContent)]
    assert len(texts) == 1 and _tokens(texts[0].text) <= 200 and img in out.content


def test_the_config_file(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(
        json.dumps({"budget": 500, "exclude": ["x"], "tools": {"logs": {"mode": "records", "budget": 100}}})
    )
    cfg = read_config(p)
    assert cfg.budget == 500 and cfg.exclude == {"x"} and cfg.tool("logs") == ToolConfig(100, "records", "")
    assert cfg.tool("other") == ToolConfig(500, "auto", "")
    # a tool's table that sets only its mode takes the budget given later on the command line
    p.write_text(json.dumps({"budget": 500, "tools": {"sel": {"mode": "prose"}, "logs": {"budget": 100}}}))
    cfg = config_from_dict({"budget": 300, "mode": "records"}, read_config(p), where="the command line")
    assert cfg.tool("sel") == ToolConfig(300, "prose", "") and cfg.tool("logs") == ToolConfig(
        100, "records", ""
    )
    assert cfg.tool("other") == ToolConfig(300, "records", "")
    for data, match in [
        ({"budgit": 1}, "unknown key 'budgit'"),
        ({"budget": 10}, "at least 64"),
        ({"budget": "many"}, "whole number"),
        ({"mode": "lines"}, "mode must be one of"),
        ({"tools": {"a": {"mode": "x"}}}, "mode must be one of"),
        ({"tools": {"a": {"budjet": 100}}}, "unknown key 'budjet'"),
        ({"exclude": "a"}, "list of tool names"),
        ({"timeout": 0}, "positive"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            config_from_dict(data, ProxyConfig())
    (tmp_path / "bad.toml").write_text("budget = ")
    with pytest.raises(ValueError, match="not valid TOML"):
        read_config(tmp_path / "bad.toml")


def test_the_cli_offers_the_proxy_s_modes():
    """scwo mcp proxy --mode lists the modes without importing the mcp extra: the same names."""
    from scwo_np.cli._mcp import PROXY_MODES

    assert list(PROXY_MODES) == list(MODES)


GPL = "/usr/share/common-licenses/GPL-3"  # hard-wrapped prose every Debian system has (base-files)


def test_config_names_that_the_upstream_lacks_are_warned_about(tmp_path, caplog):
    from scwo_np.mcp_server._proxy import _warn_unknown_names

    cfg = config_from_dict({"exclude": ["ecko"], "tools": {"logz": {"budget": 100}, "echo": {"budget": 90}}})
    with caplog.at_level("WARNING"):
        _warn_unknown_names(cfg, {"echo", "logs"})
    said = caplog.text
    assert "'ecko'" in said and "did you mean 'echo'" in said and "'logz'" in said and "'logs'" in said
    assert "tool 'echo'" not in said
    p = tmp_path / "proxy.yaml"
    p.write_text("budget: 100")
    with pytest.raises(ValueError, match=r"name it \*\.toml \(TOML\) or \*\.json"):
        read_config(p)


def test_an_array_crushed_upstream_keeps_the_upstream_s_count_and_key(tmp_path):
    """``scwo mcp`` behind the proxy: its marker was crushed away as an item, and the model was told
    the data had 107 items where it had 5,089."""
    items = [{"date": "2026-05-09", "time": f"{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
              "action": ("status", "configure", "install")[i % 3], "package": f"lib{i}"} for i in range(5000)]  # fmt: skip
    with CrushStore(tmp_path / "up.sqlite") as up:
        upstream = crush_json(json.dumps(items), budget=3000, store=up)
    theirs = json.loads(upstream)[-1]["_omitted"]
    assert theirs["key"] and theirs["of"] == 5000
    s = shrink_text(upstream, 300)
    out = json.loads(s.text)
    assert s.form == "crushed" and s.tokens <= 300
    assert {"_omitted": {"count": theirs["count"], "of": 5000, "key": theirs["key"]}} in out
    # last, after the proxy's own, which counts the upstream's items alone (not its marker: "93 of 101")
    assert out[-1] == {"_omitted": {"count": theirs["count"], "of": 5000, "key": theirs["key"]}}
    assert out[-2]["_omitted"]["of"] == len(json.loads(upstream)) - 1


def test_a_few_text_blocks_are_each_held_to_a_share_of_the_budget():
    """A log, an image and a document in one result: merged, the document was one "record" of the
    log's, dropped with no word of it."""
    log, doc = LOG, PROSE
    image = ImageContent(type="image", data="aGVsbG8=", mime_type="image/png")
    result = CallToolResult(
        content=[TextContent(type="text", text=log), image, TextContent(type="text", text=doc)]
    )
    out, s = shrink_result(result, 600)
    texts = [c.text for c in out.content if isinstance(c, TextContent)]
    assert len(out.content) == 3 and out.content[1] == image and len(texts) == 2
    assert sum(count_tokens(texts)) <= 600 and all(count_tokens(texts) <= 300)
    assert "INFO ok" in texts[0] and "talks about" in texts[1]
    meta = out.meta["scwo_np/proxy"]
    assert meta["form"] == "blocks" and [m["form"] for m in meta["blocks"]] == ["records", "prose"]
    # a short block stays whole, the other takes the rest
    out, _ = shrink_result(
        CallToolResult(
            content=[TextContent(type="text", text="exit status 0"), TextContent(type="text", text=log)]
        ),
        600,
    )
    texts = [c.text for c in out.content]
    assert (
        texts[0] == "exit status 0" and sum(count_tokens(texts)) <= 600 and count_tokens([texts[1]])[0] > 500
    )


def test_files_of_different_shapes_in_one_text_block_are_each_held_to_a_share():
    """The reference filesystem server's ``read_multiple_files`` gives one text block, each file as
    ``PATH:`` and its text, separated by ``---`` lines: a log and a document in it read as prose, the
    log's newest lines were lost (one line of the middle kept) and both paths with them."""
    text = f"/var/log/app.log:\n{LOG}\n\n---\n/usr/share/doc/app/README:\n{PROSE}\n"
    out, s = shrink_result(CallToolResult(content=[TextContent(type="text", text=text)]), 600)
    body = out.content[0].text
    assert s.form == "files" and count_tokens([body])[0] == s.tokens <= 600
    assert body.startswith("/var/log/app.log:\n") and "\n---\n/usr/share/doc/app/README:\n" in body
    log_part, doc_part = body.split("\n---\n")
    newest = LOG.rstrip("\n").rsplit("\n", 1)[1]
    assert newest in log_part and "talks about" in doc_part
    meta = out.meta["scwo_np/proxy"]
    assert meta["form"] == "files" and [m["form"] for m in meta["parts"]] == ["records", "prose"]
    # files of one shape (two pages of one log) are one text, as text blocks are
    lines = LOG.splitlines(keepends=True)
    pages = f"/var/log/a.log:\n{''.join(lines[:300])}\n---\n/var/log/b.log:\n{''.join(lines[300:])}"
    _, s = shrink_result(CallToolResult(content=[TextContent(type="text", text=pages)]), 300)
    assert s.form == "records" and s.tokens <= 300
    # a document with a rule (---) between sections is not files
    rule = f"{PROSE}\n---\n{PROSE}"
    assert (
        shrink_result(CallToolResult(content=[TextContent(type="text", text=rule)]), 300)[1].form == "prose"
    )


def test_a_changelog_beside_a_log_is_a_block_of_its_own_and_pages_of_one_log_are_one_text():
    """dpkg's log and a Debian changelog in one result both read as records of lines; merged, the
    whole changelog was one record glued to the log's last line, cut after 8 of its 473 lines."""
    from tests.anchor.test_records import _changelog

    log, changelog = LOG, _changelog()
    out, _ = shrink_result(
        CallToolResult(
            content=[TextContent(type="text", text=log), TextContent(type="text", text=changelog)]
        ),
        600,
    )
    meta = out.meta["scwo_np/proxy"]
    assert meta["form"] == "blocks" and [m["form"] for m in meta["blocks"]] == ["records", "records"]
    texts = [c.text for c in out.content]
    assert sum(count_tokens(texts)) <= 600 and changelog.split("\n", 1)[0] in texts[1]
    # two pages of one log are one text, crushed as one
    lines = log.splitlines(keepends=True)
    pages = [
        TextContent(type="text", text="".join(lines[:300])),
        TextContent(type="text", text="".join(lines[300:])),
    ]
    out, s = shrink_result(CallToolResult(content=pages), 300)
    assert out.meta["scwo_np/proxy"]["form"] == "records" and len(out.content) == 1 and s.tokens <= 300


def test_items_each_over_the_budget_are_crushed_inside():
    """Every item over the budget (botocore's endpoints.json: 8 partitions of 10,000+ tokens each)
    gave the marker alone at 1,000 tokens; the collections inside the items are crushed in turn."""
    from tests.anchor.test_max_tokens import _module_docs

    modules = ("os", "pathlib", "subprocess", "inspect", "shutil", "tarfile", "logging", "socket")
    docs = _module_docs(modules)  # the standard library's own docstrings, each module well over 1,000 tokens
    text = json.dumps({"modules": docs})
    assert all(_tokens(json.dumps(d)) > 1000 for d in docs)
    s = shrink_text(text, 1000, query="subprocess run")
    got = json.loads(s.text)
    assert s.form == "crushed" and _tokens(s.text) == s.tokens <= 1000
    shown = [
        (d["module"], k, v)
        for d in got["modules"]
        if "members" in d
        for k, v in d["members"].items()
        if k != "_omitted"
    ]
    assert len(shown) >= 3 and all(
        v == next(x for x in docs if x["module"] == m)["members"][k] for m, k, v in shown
    )


def test_a_log_and_a_changelog_read_together_stay_two_files_even_when_their_records_add_up():
    """``read_multiple_files`` of update-alternatives' log and gcc's Debian changelog: both read as
    records of lines whose counts add up joined, so they were one text ("records", 12 of 258 kept)
    and the changelog's newest entry was never shown (a new user's trial through the real proxy)."""
    from tests.anchor.test_records import _changelog

    log = "".join(
        f"update-alternatives 2025-06-{1 + i // 10:02d} 14:{i % 60:02d}:53: "
        + (f"link group pager{i} updated to point to /usr/bin/less" if i % 2 else f"run with --install /usr/bin/x{i} x{i} /usr/bin/y 50")
        + "\n"
        for i in range(120)
    )  # fmt: skip
    changelog = _changelog(200)  # (with 40 entries, joined to the log they glue to its last line)
    newest = changelog.split("\n", 1)[0]
    text = f"/var/log/alternatives.log:\n{log}\n---\n/usr/share/doc/gcc-12/changelog.Debian:\n{changelog}"
    for budget in (300, 500, 1000):
        out, s = shrink_result(CallToolResult(content=[TextContent(type="text", text=text)]), budget)
        body = out.content[0].text
        assert s.form == "files" and count_tokens([body])[0] == s.tokens <= budget
        log_part, doc_part = body.split("\n---\n")
        assert log_part.startswith("/var/log/alternatives.log:\n") and log.splitlines()[-1] in log_part
        assert doc_part.startswith("/usr/share/doc/gcc-12/changelog.Debian:\n") and newest in doc_part
