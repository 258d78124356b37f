"""Progress bars for long worker operations, fed by PROGRESS frames."""

from __future__ import annotations

from typing import Any

from tqdm import tqdm


class ProgressBar:
    """A tqdm bar that appears only once the worker reports progress."""

    def __init__(self, description: str, enabled: bool = True) -> None:
        self.description = description
        self.enabled = enabled
        self._bar: tqdm[Any] | None = None

    def update(self, report: dict[str, Any]) -> None:
        if not self.enabled:
            return
        total = report.get("total") or None
        if self._bar is None:
            self._bar = tqdm(total=total, desc=self.description, leave=False, disable=None)
        self._bar.set_postfix_str(str(report.get("text", "")), refresh=False)
        self._bar.n = int(report.get("done") or 0)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
