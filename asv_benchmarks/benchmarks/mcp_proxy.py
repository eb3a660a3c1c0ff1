"""``scwo mcp proxy`` (issue 44): what the proxy adds to a call, and what shrinking a 100 KB text costs.

``scwo mcp`` alone and behind ``scwo mcp proxy --budget 1000``, both over stdio with the
official SDK's client, in alternating calls: the added median latency of a small result that
passes through (``count_tokens``) and of a 100 KB text result cut to 1,000 tokens
(``select_context`` asked for the whole of ~100 KB of the bundled sample); and, in process, the
proxy's shrink of 100 KB of log lines (records), of JSON records and of prose to 1,000 tokens.
Targets (issue 44): at most 5 ms added for the small result, at most 20 ms to crush 100 KB.
"""

from .common import Benchmark, need, skip_in_smoke


class McpProxy(Benchmark):
    number = 1
    repeat = 1
    timeout = 900

    def setup_cache(self):
        need("mcp")
        skip_in_smoke("mcp proxy latency")
        try:
            from scwo_np.bench._proxy import proxy_latency
        except ImportError:  # commits before the proxy (issue 44)
            raise NotImplementedError("no scwo mcp proxy in this commit") from None
        return proxy_latency(calls=200)

    def track_passthrough_added_ms(self, r):
        return r["passthrough_added_ms"]

    track_passthrough_added_ms.unit = "ms"

    def track_passthrough_direct_ms(self, r):
        return r["passthrough_direct_ms"]

    track_passthrough_direct_ms.unit = "ms"

    def track_100kb_added_ms(self, r):
        return r["big_added_ms"]

    track_100kb_added_ms.unit = "ms"

    def track_100kb_shrink_beside_the_hop_ms(self, r):
        return r["big_shrink_added_ms"]

    track_100kb_shrink_beside_the_hop_ms.unit = "ms"

    def track_shrink_records_100kb_ms(self, r):
        return r["shrink_ms"]["records"]["median_ms"]

    track_shrink_records_100kb_ms.unit = "ms"

    def track_shrink_json_100kb_ms(self, r):
        return r["shrink_ms"]["json"]["median_ms"]

    track_shrink_json_100kb_ms.unit = "ms"

    def track_shrink_prose_100kb_ms(self, r):
        return r["shrink_ms"]["prose"]["median_ms"]

    track_shrink_prose_100kb_ms.unit = "ms"
