"""``scwo mcp``: a ``select_context`` round trip over stdio (issue 35).

50 texts of about 100 tokens (the bundled sample), the default LSA embedder, the official
SDK's client talking to ``scwo mcp`` as a subprocess; 200 timed calls after 5 warm-up
ones.  Tracked: the median and p99 round trip, the selection's own median (the same call
in-process) and the share of the round trip that is the protocol.
"""

from .common import Benchmark, need


class McpLatency(Benchmark):
    number = 1
    repeat = 1
    timeout = 600

    def setup_cache(self):
        need("mcp")
        try:
            from scwo_np.bench import mcp_latency
        except ImportError:  # commits before scwo_np.bench (0.2), which asv's history still runs
            from scwo_np.mcp_server import mcp_latency

        return mcp_latency(calls=200)

    def track_round_trip_median_ms(self, r):
        return r["median_ms"]

    track_round_trip_median_ms.unit = "ms"

    def track_round_trip_p99_ms(self, r):
        return r["p99_ms"]

    track_round_trip_p99_ms.unit = "ms"

    def track_selection_median_ms(self, r):
        return r["selection_median_ms"]

    track_selection_median_ms.unit = "ms"

    def track_protocol_share(self, r):
        return r["protocol_share"]

    track_protocol_share.unit = "share of the round trip"
