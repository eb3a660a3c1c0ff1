"""The result of one evaluation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EvalResult:
    name: str
    pass_rate: float
    criterion: float
    cases: int
    detail: dict

    @property
    def passed(self) -> bool:
        return self.pass_rate >= self.criterion

    def line(self) -> str:
        mark = "met" if self.passed else "NOT met"
        return f"{self.name}: {self.pass_rate:.1%} of {self.cases} cases (criterion >= {self.criterion:.0%}, {mark})"
