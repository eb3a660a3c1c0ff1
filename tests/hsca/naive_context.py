"""HSCA's context, plainly: the reference :meth:`HSCAEngine.context` is checked against
(``test_hsca_context.py``).  Lists and loops only; the relevance, the costs and the MMR of the plain
reference in ``tests/naive.py`` are its inputs."""

from __future__ import annotations

import math

from tests.naive import mmr_with_relevance

EXCHANGE, EXCERPT_MIN, PROBES = 3, 16, 64


def _newest(units, first, costs, key, reserve, taken, said, cite=0, exchange=0, limit=0, skip=False):
    """The newest turns, whole, newest first: each without its units ``taken`` or already ``said``
    (by key; a sentence twice in a turn once), a turn none of whose units is taken ``cite`` more; a
    turn with nothing new is passed over; the first ``exchange`` turns taken may use ``limit`` in
    all, the others what is left of ``reserve``; the first one with something, when too long, gives
    its last units that fit; a later one too long ends the walk (with ``skip``, it is passed over).
    ``said`` gains the keys taken."""
    owner_taken = {t for t in range(len(units)) for u in taken if first[t] <= u < first[t] + len(units[t])}
    out, spent, n_whole = [], 0, 0
    for t in range(len(units) - 1, -1, -1):
        mine = []
        for u in range(first[t], first[t] + len(units[t])):
            if u not in taken and key[u] not in said and key[u] not in [key[v] for v in mine]:
                mine.append(u)
        if not mine:
            continue
        extra = 0 if t in owner_taken else cite
        c = sum(costs[u] + 1 for u in mine) + extra
        room = (max(limit, reserve) if n_whole < exchange else reserve) - spent
        if c <= room:
            out += mine
            said |= {key[u] for u in mine}
            spent += c
            n_whole += 1
            continue
        if skip:
            continue
        if not out:
            left = room - extra
            for u in reversed(mine):
                if costs[u] + 1 > left:
                    break
                out.append(u)
                said.add(key[u])
                left -= costs[u] + 1
        break
    return out


def _kept(text, spans, lines=False):
    out = ""
    for k, (a, b) in enumerate(spans):
        start = text.rfind("\n", 0, a) + 1  # the line's start: with lines, its indentation is kept
        if lines and text[start:a].strip() == "" and (k == 0 or start >= spans[k - 1][1]):
            a = start
        if k:
            gap = text[spans[k - 1][1] : a]
            out += gap if not gap.strip() else ("\n…\n" if lines else " … ")
        out += text[a:b]
    return out


def _text(turns, owner, spans, chosen, cite, runs=False, extra=None, line=None):
    """One cited block per turn, in turn order (an excerpt's turn cited ``, excerpt`` and its lines
    joined by ``\\n…\\n``, as a turn's kept lines of a pasted file, ``line[u]``); with ``runs``, one
    block per run of consecutive turns, ``turns a-b``."""
    extra = extra or {}
    kept_turns = sorted({owner[u] for u in chosen} | set(extra))
    texts = {}
    for t in kept_turns:
        kept = sorted([spans[u] for u in chosen if owner[u] == t] + list(extra.get(t, [])))
        texts[t] = _kept(
            turns[t], kept, runs or t in extra or any(line and line[u] for u in chosen if owner[u] == t)
        )
    groups = []
    for t in kept_turns:
        if runs and groups and groups[-1][-1] == t - 1:
            groups[-1].append(t)
        else:
            groups.append([t])
    blocks = []
    for g in groups:
        head = (
            cite(g[0]) + (", excerpt" if g[0] in extra else "")
            if len(g) == 1
            else f"turns {g[0] + 1}-{g[-1] + 1}"
        )
        blocks.append(f"[{head}] " + "\n\n".join(texts[t] for t in g))
    return "\n\n".join(blocks)


def _lines(text, a, b):
    out, start = [], a
    for line in text[a:b].split("\n"):
        if line.strip():
            lead = len(line) - len(line.lstrip())
            out.append((start + lead, start + lead + len(line.strip())))
        start += len(line) + 1
    return out


def hsca_context(
    turns, units, costs, words, rel, vectors, budget, recent, lam, query, cite, count, step=0.2,
    terms=None, line_terms=None, exchange=0, line=None,
):  # fmt: skip
    """HSCA's context: ``turns`` (texts), ``units`` (per turn, its unit spans), ``costs`` and ``rel``
    (per unit, flat in turn order), ``vectors`` (per unit), ``cite(t)`` (a turn's citation),
    ``count(text)`` (tokens), ``words`` (per unit, its content words), ``terms`` (the query's
    weighted terms), ``line_terms(text)`` (a line's terms) and ``line`` (per unit, whether it is a
    line of a pasted file: a turn's kept lines are joined as an excerpt's).

    The budget is at most the whole conversation's tokens and one citation's; of that cap ``c`` the
    context is the fullest of ``at(c)``, ``at(c - 1)``, ... down to what the first one used (at most
    64 more).  ``at(c)``: when ``c`` holds the whole conversation, every turn whole in runs of
    consecutive turns (``turns a-b``); while over, whole turns go in order: those whose every unit is
    said in another turn first, then those with no content word (the newest turn has one), then
    (with a query) the least related in steps of ``step`` of the highest relevance, the newest turn
    last in its step, the shortest, the oldest; the newest exchange (3 turns) and the newest turns
    in ``recent`` of ``c`` kept, the older of them last; then the dropped turns that fit in what that
    freed come back, the last dropped first.  Otherwise: the newest exchange (up to ``c``) and the
    newest turns within ``recent`` of the inner budget, each with its citation; budgeted MMR over
    the other units with content words (with a query, those with positive relevance) said nowhere
    more relevant nor by those turns; the inner budget lowered by the overflow until the text fits;
    with a query and 16 tokens left, the lines of the most relevant unit too large for the room (of
    the first three tried) that match the query, best first, then those around them, nearest first,
    cited ``excerpt``; then the newest turns that fit in the room left, passing over those that do
    not; if nothing, the most of the newest turn's last units whose text fits."""
    owner = [t for t, per_turn in enumerate(units) for _ in per_turn]
    spans = [s for per_turn in units for s in per_turn]
    first = [sum(len(u) for u in units[:t]) for t in range(len(units))]
    n = len(turns)
    one = count("[turn 9999, snapshot 9999] ")
    whole = count("\n\n".join(turns))
    cap = min(budget, whole + one)
    per_turn = one + 1
    exchange = exchange if recent > 0 else 0
    key = [" ".join(turns[owner[u]][a:b].lower().split()) for u, (a, b) in enumerate(spans)]
    announces = {}  # a turn's last unit ending with ":" -> the next turn's first unit, chosen with it
    for t in range(n - 1):
        if units[t] and units[t + 1] and key[first[t] + len(units[t]) - 1].endswith(":"):
            announces[first[t] + len(units[t]) - 1] = first[t + 1]
    keeper = {}
    for u in range(len(spans)):
        if key[u] not in keeper or rel[u] >= rel[keeper[key[u]]]:
            keeper[key[u]] = u

    def measure(chosen, runs=False, extra=None):
        text = _text(turns, owner, spans, chosen, cite, runs, extra, line)
        return text, (count(text) if text else 0)

    def whole_talk(c):
        kept = {t: list(range(first[t], first[t] + len(units[t]))) for t in range(n)}
        newest = _newest(units, first, costs, key, int(recent * c), [], set(), per_turn, exchange, c)
        stay = sorted({owner[u] for u in newest})
        size = {t: sum(costs[u] + 1 for u in us) + per_turn for t, us in kept.items()}
        top = max(rel) if query is not None else 0.0

        def value(t):
            related = math.floor(max(rel[u] for u in kept[t]) / top / step) if top > 0 else 0
            repeats = all(any(key[v] == key[u] for v in range(len(spans)) if owner[v] != t) for u in kept[t])
            has_words = t == n - 1 or any(words[u] > 0 for u in kept[t])
            return (not repeats, has_words, related, t == n - 1, size[t], t)

        order = sorted((t for t in kept if t not in stay), key=value) + stay[:-1]
        keep, dropped = set(kept), []
        while True:
            text, tokens = measure([u for t in keep for u in kept[t]], True)
            if tokens <= c:
                break
            if not order:
                return None
            freed = 0
            while freed < tokens - c and order:
                t = order.pop(0)
                keep.discard(t)
                dropped.append(t)
                freed += size[t]
        room, back = c - tokens, set()
        for t in reversed(dropped):
            if size[t] <= room:
                back.add(t)
                room -= size[t]
        if back:
            fuller, more = measure([u for t in keep | back for u in kept[t]], True)
            if more <= c:
                return fuller, more
        return (text, tokens) if text else None

    def excerpt(chosen, said, c, tokens):
        room = c - tokens
        if not terms or room < EXCERPT_MIN:
            return None
        tried = 0
        for u in sorted(range(len(spans)), key=lambda v: (-rel[v], v)):
            if rel[u] <= 0 or tried == 3:
                break
            if u in chosen or costs[u] + 1 <= room or not words[u] or key[u] in said:
                continue
            tried += 1
            t = owner[u]
            lines = _lines(turns[t], *spans[u])
            score = [sum(terms.get(k, 0.0) for k in set(line_terms(turns[t][x:y]))) for x, y in lines]
            ranked = sorted((k for k in range(len(lines)) if score[k] > 0), key=lambda k: (-score[k], k))
            if len(lines) < 2 or not ranked:
                continue
            left = room - (0 if t in {owner[v] for v in chosen} else per_turn)
            picked = []
            near = sorted(  # nearest first; of two as near, the one after a match (a comment's value)
                range(len(lines)),
                key=lambda k: (min(abs(k - j) for j in ranked[:50]), min(abs(k - j) for j in ranked[:50]) not in
                               {k - j for j in ranked[:50]}, k),
            )  # fmt: skip
            order = []  # each matching line, best first, with the line after it; then the others, nearest first
            for k in [x for j in ranked for x in (j, j + 1) if x < len(lines)] + near:
                if k not in order:
                    order.append(k)
            for k in order:
                cost = count(turns[t][lines[k][0] : lines[k][1]]) + 1
                cost += 0 if (k - 1 in picked or k + 1 in picked) else 3
                if cost <= left:
                    picked.append(k)
                    left -= cost
            while picked:
                extra = {t: [lines[k] for k in picked]}
                text, got = measure(chosen, extra=extra)
                if got <= c:
                    return extra, u, text, got
                picked.pop()
        return None

    def at(c):
        if whole <= c and (talk := whole_talk(c)) is not None:
            return talk
        k = 0
        for j in range(1, exchange + 1):
            got = _newest(units, first, costs, key, 0, [], set(), 0, j, 1 << 62)
            if len({owner[u] for u in got}) < j or measure(got)[1] > c:
                break
            k = j
        inner = c
        while True:
            said = set()
            chosen = _newest(units, first, costs, key, int(recent * inner), [], said, per_turn, k, 1 << 62)
            rest = inner - sum(costs[u] + 1 for u in chosen) - per_turn * len({owner[u] for u in chosen})
            cand = [
                u
                for u in range(len(spans))
                if u not in chosen
                and keeper[key[u]] == u
                and key[u] not in said
                and words[u] > 0
                and (query is None or rel[u] > 0)
            ]
            if rest > 0 and cand:
                cost = [
                    costs[u] + 1 + (costs[announces[u]] + 1 + per_turn if u in announces else 0) for u in cand
                ]
                picks, _ = mmr_with_relevance(
                    [vectors[u] for u in cand], [rel[u] for u in cand], cost, rest, lam, dtype="float32"
                )
                for i in picks:
                    for w in [cand[i]] + ([announces[cand[i]]] if cand[i] in announces else []):
                        if w not in chosen:
                            chosen.append(w)
                        said.add(key[w])
            text, tokens = measure(chosen)
            if tokens > c:
                inner = max(0, inner - (tokens - c))
                continue
            taken, extra = list(chosen), None
            cut = excerpt(chosen, said, c, tokens)
            if cut is not None:
                extra, u, text, tokens = cut
                taken.append(u)
                said.add(key[u])
            more = _newest(units, first, costs, key, c - tokens, taken, said, per_turn, skip=True)
            if more:
                fuller, got = measure(chosen + more, extra=extra)
                if got <= c:
                    return fuller, got
            if chosen or extra:
                return text, tokens
            mine = []
            for u in range(first[-1], first[-1] + len(units[-1])):
                if key[u] not in [key[v] for v in mine]:
                    mine.append(u)
            out = ("", 0)
            for k in range(1, len(mine) + 1):
                got = measure(mine[-k:])
                if got[1] > c:
                    break
                out = got
            return out

    if not budget or not turns:
        return ""
    best = at(cap)
    k = 0
    for j in range(1, exchange + 1):
        got = _newest(units, first, costs, key, 0, [], set(), 0, j, 1 << 62)
        if len({owner[u] for u in got}) < j or measure(got)[1] > cap:
            break
        k = j
    newest = _newest_cited(best[0], n - k)
    for c in range(cap - 1, max(best[1], cap - 1 - PROBES), -1):
        if (other := at(c))[1] > best[1] and newest <= _newest_cited(other[0], 0):
            best = other
    return best[0]


def _newest_cited(text, after):
    """The turns after ``after`` (from 1) that the text's citations name (runs included)."""
    import re

    out = set()
    for m in re.finditer(r"^\[turns? (\d+)(?:-(\d+))?", text, flags=re.M):
        a = int(m.group(1))
        out |= set(range(a, int(m.group(2) or a) + 1))
    return {t for t in out if t > after}
