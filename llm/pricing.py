"""Per-run cost from a price table: model-name prefix -> USD per million tokens."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path


class PriceTable:
    def __init__(self, table: dict[str, dict]):
        self.table = {k: v for k, v in table.items() if not k.startswith("_")}

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        if path is None:
            text = resources.files("agenthop.llm").joinpath("prices.json").read_text()
        else:
            text = Path(path).read_text()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"price table {path or 'prices.json'} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(
                "a price table is a JSON object: model-name prefix -> {input_per_m, output_per_m, cached_input_per_m}"
            )
        for key, row in data.items():
            if key.startswith("_"):
                continue
            if not isinstance(row, dict) or "input_per_m" not in row or "output_per_m" not in row:
                raise ValueError(
                    f"price table entry {key!r} needs input_per_m and output_per_m (USD per million tokens)"
                )
        return cls(data)

    def lookup(self, model: str) -> dict | None:
        """The entry with the longest prefix of ``model`` (also tried without a 'provider/' part)."""
        names = [model]
        if "/" in model:
            names.append(model.rsplit("/", 1)[1])
        for name in names:
            best = max((k for k in self.table if name.startswith(k)), key=len, default=None)
            if best is not None:
                return self.table[best]
        return None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
        """USD for the tokens; None when the model is not in the table."""
        row = self.lookup(model)
        if row is None:
            return None
        cached = min(cached_tokens, prompt_tokens)
        cached_rate = row.get("cached_input_per_m", row["input_per_m"])
        usd = (
            (prompt_tokens - cached) * row["input_per_m"]
            + cached * cached_rate
            + completion_tokens * row["output_per_m"]
        ) / 1e6
        return round(usd, 6)
