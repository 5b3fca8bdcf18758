"""The lecture hall's report: percentiles of the raw samples and one table with the app/lean ratios.

Plain Python (no Locust, no gevent), so it can be imported anywhere.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field


@dataclass
class HallRecord:
    """Raw samples of one hall (seconds)."""

    opens: list[float] = field(default_factory=list)
    clicks: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    page_not_found: int = 0
    sessions_done: int = 0
    model_open: float | None = None
    model_when: str = ""  # the real-model page was opened "before" the hall or "during" it
    rss_samples: list[float] = field(default_factory=list)


def pooled(records: list[HallRecord]) -> HallRecord:
    """One record holding every sample of ``records`` (several halls of the same target)."""
    return HallRecord(opens=[x for r in records for x in r.opens], clicks=[x for r in records for x in r.clicks],
                      errors=[x for r in records for x in r.errors],
                      page_not_found=sum(r.page_not_found for r in records),
                      sessions_done=sum(r.sessions_done for r in records),
                      model_open=next((r.model_open for r in records if r.model_open is not None), None),
                      model_when=next((r.model_when for r in records if r.model_when), ""),
                      rss_samples=[x for r in records for x in r.rss_samples])


RATIO_METRICS = ("open p50 s", "open p95 s", "Next p50 s", "Next p95 s")


def round_ratios(rounds: list[dict[str, HallRecord]]) -> str:
    """Each round's app/lean ratios of the hall's times, and their medians: how much one run's ratio varies."""
    ratios = {metric: [summary(r["app"])[metric] / summary(r["lean"])[metric] for r in rounds]
              for metric in RATIO_METRICS}
    lines = [f"round {i + 1}: " + ", ".join(f"{metric.removesuffix(' s')} {ratios[metric][i]:.2f}×"
                                             for metric in RATIO_METRICS) for i in range(len(rounds))]
    lines.append(f"median of {len(rounds)} rounds: " + ", ".join(
        f"{metric.removesuffix(' s')} {statistics.median(ratios[metric]):.2f}×" for metric in RATIO_METRICS))
    return "\n".join(lines)


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(record: HallRecord) -> dict[str, float]:
    return {
        "open p50 s": percentile(record.opens, 50), "open p95 s": percentile(record.opens, 95),
        "Next p50 s": percentile(record.clicks, 50), "Next p95 s": percentile(record.clicks, 95),
        "opened": len(record.opens), "clicks": len(record.clicks), "errors": len(record.errors),
        "page not found": record.page_not_found,
        "RSS peak MB": _whole(max(record.rss_samples, default=math.nan)),
        "RSS end MB": _whole(record.rss_samples[-1] if record.rss_samples else math.nan),
    }


def _whole(value: float) -> float | int:
    return value if math.isnan(value) else round(value)


def format_table(results: dict[str, HallRecord]) -> str:
    rows = {name: summary(record) for name, record in results.items()}
    names = list(rows)
    header = f"| {'':16} | " + " | ".join(f"{n:>9}" for n in names)
    ratio = "app" in rows and "lean" in rows
    if ratio:
        header += f" | {'app/lean':>9}"
    lines = [header + " |", "|" + "---|" * (len(names) + 1 + ratio)]
    for metric in rows[names[0]]:
        cells = [_cell(rows[n][metric]) for n in names]
        line = f"| {metric:16} | " + " | ".join(f"{c:>9}" for c in cells)
        if ratio:
            app, lean = rows["app"][metric], rows["lean"][metric]
            shown = ""
            if metric.endswith(" s") or "RSS" in metric:
                shown = f"{app / lean:.2f}×" if lean > 0 and math.isfinite(app / lean) else "–"
            line += f" | {shown:>9}"
        lines.append(line + " |")
    for name, record in results.items():
        if record.model_open is not None:
            lines.append(f"\n{name}: the real-model page (the model loading) opened in {record.model_open:.2f} s "
                         f"{record.model_when} the hall")
    return "\n".join(lines)


def _cell(value: float) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "–"
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 10:
        return f"{value:.0f}"
    return f"{value:.3f}" if abs(value) < 1 else f"{value:.2f}"  # a hall's times are often tens of ms
