"""The framework components (``scwo_np.integrations``): what they add over the array call.

Target (issue 16): at most 0.5 ms per call over ``mmr_select`` on the arrays, for
50 retrieved documents (the bundled sample's real chunks nearest a bundled
question, all-MiniLM-L6-v2 vectors, d = 384) carried the way each framework
carries them: LangChain ``Document`` metadata lists of floats, LlamaIndex
``TextNode.embedding`` lists, the question's vector given.  The conversion of
those Python lists to one array (19,200 floats) is most of it.
"""

import numpy as np

from .common import Benchmark, best_time


def _setup():
    from scwo_np import load_sample
    from scwo_np.tokens import count_tokens

    s = load_sample()
    cand = np.argsort(-(s.embeddings @ s.query_embeddings[0]), kind="stable")[:50]
    texts = [s.texts[i] for i in cand]
    E, q = s.embeddings[cand], s.query_embeddings[0]
    return texts, E, q, count_tokens(texts)


class LangChainCompressor(Benchmark):
    def setup(self):
        try:
            from langchain_core.documents import Document
            from langchain_core.embeddings import Embeddings
        except ImportError:
            raise NotImplementedError("langchain-core is not installed") from None
        from scwo_np import mmr_select
        from scwo_np.integrations.langchain import ScwoCompressor

        texts, E, q, costs = _setup()
        qv = q.tolist()

        class Given(Embeddings):  # the question's vector, as a vector store hands it over
            def embed_documents(self, ts):
                raise AssertionError("the documents carry their vectors")

            def embed_query(self, t):
                return qv

        docs = [Document(page_content=t, metadata={"embedding": E[k].tolist()}) for k, t in enumerate(texts)]
        comp = ScwoCompressor(budget=1000, embeddings=Given())
        self.ours = lambda: comp.compress_documents(docs, "question")
        self.array = lambda: mmr_select(E, q, costs, 1000)

    def time_compress_documents(self):
        self.ours()

    def track_overhead_ms(self):
        return 1e3 * (best_time(self.ours, repeat=50) - best_time(self.array, repeat=50))

    track_overhead_ms.unit = "ms"


class LlamaIndexPostprocessor(Benchmark):
    def setup(self):
        try:
            from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
        except ImportError:
            raise NotImplementedError("llama-index-core is not installed") from None
        from scwo_np import mmr_select
        from scwo_np.integrations.llamaindex import ScwoNodePostprocessor

        texts, E, q, costs = _setup()
        nodes = [
            NodeWithScore(node=TextNode(text=t, embedding=E[k].tolist()), score=1.0)
            for k, t in enumerate(texts)
        ]
        qb = QueryBundle(query_str="question", embedding=q.tolist())
        pp = ScwoNodePostprocessor(budget=1000)
        self.ours = lambda: pp.postprocess_nodes(nodes, qb)
        self.array = lambda: mmr_select(E, q, costs, 1000)

    def time_postprocess_nodes(self):
        self.ours()

    def track_overhead_ms(self):
        return 1e3 * (best_time(self.ours, repeat=50) - best_time(self.array, repeat=50))

    track_overhead_ms.unit = "ms"
