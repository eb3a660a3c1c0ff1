"""Texts of each shape for the shrink tests (here and tests/mcp_server/test_shrink.py)."""

from scwo_np.tokens import count_tokens

ROWS = [{"id": i, "status": "failed" if i == 77 else "ok", "total": i * 3} for i in range(500)]

LOG = "".join(
    f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}Z {'ERROR boom' if i == 100 else 'INFO ok'} {i}\n"
    for i in range(600)
)

PROSE = " ".join(
    f"Sentence {i} talks about {'git branches and merges' if i % 9 == 0 else 'the weather in the valley'}."
    for i in range(300)
)


def tokens(text: str) -> int:
    return int(count_tokens([text])[0])
