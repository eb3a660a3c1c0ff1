"""What the relevance of issue 43 costs beside the embedder, on 50 retrieved paragraphs.

Target (issue 43): the question's words (each text's share of their BM25 weight, since
2026-11-29; BM25 of every unit before), the neighbour lift, the length
cost, the same-text axis and (since 2026-11-30) the match of the question's word pieces in each
text add at most 3 ms beside the embedder for 50 chunks.  The pieces are what MiniLM gives: one
unit vector of 384 per word piece (here 1.3 per word, random; the question's words plus two),
the rows of one block in the sentences' order, as a warm call reads them from the embedding
cache; the match one matrix product of the question's pieces with them.  The texts
are real: the 50 paragraphs MiniLM retrieved for the bundled Python FAQ's questions
(``load_questions("python-faq")``).  ``time_added_steps`` runs exactly the steps the relevance
adds to sentence selection (its units already cut, its sentence cosines known);
``track_added_ms`` reports the same in milliseconds (median over 20 questions), and
``track_whole_call_ratio`` the whole sentence call against the same call with the four parts
off, with an embedder that costs nothing (vectors from a table), so the ratio shows the
relevance's share of everything but the model.
"""

import numpy as np

from ..common import Benchmark, best_time


def _unit_rows(rng, m):
    X = rng.normal(size=(m, 384)).astype(np.float32)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


class SentenceRelevance(Benchmark):
    params = [20]
    param_names = ["questions"]

    def setup(self, questions):
        from scwo_np.datasets import load_questions
        from scwo_np.select._units import Units

        qs = load_questions("python-faq")
        self.cases = []
        for i in range(questions):
            texts = [qs.paragraphs[c] for c in qs.candidates[i]]
            units = Units(texts)
            rng = np.random.default_rng(i)
            best = rng.uniform(-0.2, 0.8, len(units))
            E = rng.normal(size=(len(units), 384))
            sizes = [int(1.3 * len(s.split())) + 1 for s in units.sentences]  # as the cache gives them:
            pieces = np.split(_unit_rows(rng, sum(sizes)), np.cumsum(sizes)[:-1])  # rows of one block
            asked = _unit_rows(rng, len(qs.questions[i].split()) + 2)
            self.cases.append((texts, qs.questions[i], units, best, E, pieces, asked))

    def _added(self, case):
        try:
            from scwo_np._lexical import question_share

            def words(texts, units, question):  # each unit, its text's share of the question's weight
                return question_share(texts, question)[units.text_of]
        except ImportError:  # commits before 2026-11-29: each unit's own BM25 over the best unit's
            try:
                from scwo_np._lexical import lexical_relevance
            except ImportError:  # commits before it moved to the core
                from scwo_np.select._lexical import lexical_relevance

            def words(texts, units, question):
                return lexical_relevance(units.texts, question)

        from scwo_np.select._units import neighbour_lift, spread_over_texts
        from scwo_np.tokens import count_tokens

        texts, question, units, best, E, pieces, asked = case
        own = count_tokens(units.texts, "estimate")
        rel = best + 0.3 * neighbour_lift(best, units.text_of) + 0.1 * words(texts, units, question)
        rel -= 0.06 * own / own.mean()
        try:
            from scwo_np.select._units import piece_match
        except ImportError:  # commits before 2026-11-30
            pass
        else:
            of_sentence = np.repeat(units.text_of, np.diff(np.r_[units.start, len(units.sentences)]))
            rel += 0.5 * piece_match(asked, pieces, of_sentence, len(texts))[units.text_of]
        return rel, spread_over_texts(E, units.text_of)

    def time_added_steps(self, questions):
        for case in self.cases:
            self._added(case)

    def track_added_ms(self, questions):
        return float(np.median([best_time(lambda c=c: self._added(c), repeat=5) for c in self.cases]) * 1e3)

    track_added_ms.unit = "ms"

    def track_whole_call_ratio(self, questions):
        from scwo_np import select_texts
        from scwo_np.select import _texts, _units

        table = {}

        def embed(texts):  # vectors from a table: the model costs nothing here
            return np.stack(
                [table.setdefault(t, np.random.default_rng(len(table)).normal(size=64)) for t in texts]
            )

        def call(**kw):
            for texts, question, *_ in self.cases:  # an embedder without word pieces
                select_texts(texts, question, 400, embedder=embed, granularity="sentence", **kw)

        def off():
            saved = _texts.LENGTH_COST, _texts.NEIGHBOUR, _units.SAME_TEXT
            _texts.LENGTH_COST, _texts.NEIGHBOUR, _units.SAME_TEXT = 0.0, 0.0, 0.0
            try:
                call(lexical=0.0)
            finally:
                _texts.LENGTH_COST, _texts.NEIGHBOUR, _units.SAME_TEXT = saved

        return best_time(call, repeat=3) / best_time(off, repeat=3)

    track_whole_call_ratio.unit = "x"
