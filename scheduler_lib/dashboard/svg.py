"""Charts as inline SVG, drawn on the server.

Why not a JavaScript charting library: the page must work offline and under a CSP that
allows no inline script, a chart of at most 1,000 points is a few kilobytes of SVG, it is
readable by a test (and a screen reader: every point has a `<title>`) as plain elements,
and there is nothing to vendor, update or load. Every value written into the markup is
escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

from markupsafe import Markup

from scheduler_lib.service.activity import Hour

WIDTH, HEIGHT, PAD = 900, 260, 44
_COLOURS = {
    "Completed": "#2e7d32", "Failed": "#c62828", "Postponed": "#ef6c00", "Skipped": "#546e7a",
}  # fmt: skip
#: Occurrences that did not run (not failures): a mark on the time axis, not a lateness dot.
NOT_RUN = ("Postponed", "Skipped")


@dataclass(frozen=True)
class Point:
    """One execution: when it was expected, how late it started and how long it ran (s)."""

    at: datetime
    lateness: float
    duration: float
    status: str
    label: str


def _scale(value: float, low: float, high: float, size: float) -> float:
    return 0.0 if high <= low else (value - low) / (high - low) * size


def execution_chart(points: Sequence[Point]) -> Markup:
    """Lateness (dots, by outcome) and duration (line) per execution over time."""
    if not points:
        return Markup('<p class="empty">No executions yet: nothing to chart.</p>')
    ordered = sorted(points, key=lambda p: p.at)
    t0, t1 = ordered[0].at.timestamp(), ordered[-1].at.timestamp()
    top = max(max(p.lateness for p in ordered), max(p.duration for p in ordered), 1.0)
    low = min(0.0, min(p.lateness for p in ordered))
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def xy(point: Point, value: float) -> tuple[float, float]:
        x = PAD + (_scale(point.at.timestamp(), t0, t1, inner_w) if t1 > t0 else inner_w / 2)
        return round(x, 1), round(HEIGHT - PAD - _scale(value, low, top, inner_h), 1)

    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="Lateness and duration of {len(ordered)} executions">',
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{HEIGHT - PAD}"/>',
        f'<line class="axis" x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}"/>',
        f'<text class="tick" x="{PAD - 6}" y="{PAD + 4}" text-anchor="end">{top:.3g}s</text>',
        f'<text class="tick" x="{PAD - 6}" y="{HEIGHT - PAD}" text-anchor="end">{low:.3g}s</text>',
    ]
    if t1 > t0:
        first, last = _short(ordered[0].at), _short(ordered[-1].at)
        if first == last:  # runs within one minute: the seconds tell the ends apart
            first, last = (f"{p.at:%Y-%m-%d %H:%M:%S}" for p in (ordered[0], ordered[-1]))
        first, last = escape(first), escape(last)
        parts.append(f'<text class="tick" x="{PAD}" y="{HEIGHT - 12}">{first}</text>'
                     f'<text class="tick" x="{WIDTH - PAD}" y="{HEIGHT - 12}" '
                     f'text-anchor="end">{last}</text>')  # fmt: skip
    else:  # one instant: its time once, under its mark in the middle
        parts.append(f'<text class="tick" x="{WIDTH / 2}" y="{HEIGHT - 12}" text-anchor="middle">'
                     f"{escape(_short(ordered[0].at))}</text>")  # fmt: skip
    ran = [p for p in ordered if p.status not in NOT_RUN]
    line = " ".join("{},{}".format(*xy(p, p.duration)) for p in ran)
    parts.append(f'<polyline class="duration" points="{line}"/>')
    if len(ran) == 1:  # a line through one point has no length: draw its duration as a tick
        (x, y), only = xy(ran[0], ran[0].duration), ran[0]
        parts.append(
            f'<line class="duration single" x1="{x - 10}" y1="{y}" x2="{x + 10}" y2="{y}">'
            f"<title>{escape(only.label)}: ran {only.duration:.2f}s</title></line>"
        )
    for p in ordered:
        if p.status in NOT_RUN:
            x, _ = xy(p, 0.0)
            parts.append(
                f'<rect class="not-run {escape(p.status.lower())}" x="{x - 3}" '
                f'y="{HEIGHT - PAD - 3}" width="6" height="6" fill="{_COLOURS[p.status]}">'
                f"<title>{escape(p.label)}: {escape(p.status)}, did not run (not a failure)"
                "</title></rect>"
            )
            continue
        x, y = xy(p, p.lateness)
        colour = _COLOURS.get(p.status, "#555")
        parts.append(
            f'<circle class="lateness {escape(p.status.lower())}" cx="{x}" cy="{y}" r="4" '
            f'fill="{colour}"><title>{escape(p.label)}: {p.lateness:.2f}s late, '
            f"ran {p.duration:.2f}s ({escape(p.status)})</title></circle>"
        )
    parts.append(
        f'<g class="legend"><circle cx="{WIDTH - 265}" cy="16" r="4" fill="#2e7d32"/>'
        f'<text x="{WIDTH - 255}" y="20">lateness (dot, by outcome)</text>'
        f'<rect x="{WIDTH - 415}" y="13" width="6" height="6" fill="#546e7a"/>'
        f'<text x="{WIDTH - 405}" y="20">skipped/postponed</text>'
        f'<line class="duration" x1="{WIDTH - 90}" y1="16" x2="{WIDTH - 70}" y2="16"/>'
        f'<text x="{WIDTH - 64}" y="20">duration</text></g></svg>'
    )
    return Markup("".join(parts))


def sparkline(statuses: Sequence[str]) -> Markup:
    """Recent outcomes, oldest left: one bar each, coloured by outcome."""
    if not statuses:
        return Markup('<span class="muted">no runs</span>')
    bars = []
    for index, status in enumerate(statuses):
        colour = _COLOURS.get(status, "#555")
        height = 14 if status == "Completed" else 8 if status in NOT_RUN else 20
        bars.append(
            f'<rect class="{escape(status.lower())}" x="{index * 6}" y="{20 - height}" '
            f'width="4" height="{height}" fill="{colour}"><title>{escape(status)}</title></rect>'
        )
    width = len(statuses) * 6
    label = f"{statuses.count('Failed')} failed of the last {len(statuses)}"
    if "Skipped" in statuses:
        label += f", {statuses.count('Skipped')} skipped (not failures)"
    return Markup(
        f'<svg class="sparkline" viewBox="0 0 {width} 20" width="{width}" height="20" '
        f'role="img" aria-label="{escape(label)}">{"".join(bars)}</svg>'
    )


def histogram(buckets: Sequence[tuple[datetime, int]], *, unit: str) -> Markup:
    """Upcoming runs per bucket (`unit`: minute or hour); the busiest bucket is marked, so
    a herd of jobs at the same second stands out as one tall bar."""
    if not buckets or not any(count for _, count in buckets):
        return Markup('<p class="empty">No runs in this window.</p>')
    peak = max(count for _, count in buckets)
    label = (lambda at: at.strftime("%H:%M:%S")) if unit == "second" else _short
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / len(buckets)
    by_second = unit == "second"  # the busiest minute zoomed in: its own classes
    css = "busiest-minute" if by_second else "timeline"
    parts = [
        f'<svg class="{css}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="Upcoming runs per {unit}; busiest {unit}: {peak} runs">',
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{HEIGHT - PAD}"/>',
        f'<text class="tick" x="{PAD - 6}" y="{PAD + 4}" text-anchor="end">{peak}</text>',
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 12}">{escape(_short(buckets[0][0]))}</text>',
        f'<text class="tick" x="{WIDTH - PAD}" y="{HEIGHT - 12}" text-anchor="end">'
        f"{escape(_short(buckets[-1][0]))}</text>",
    ]
    for index, (start, count) in enumerate(buckets):
        if not count:
            continue
        height = max(_scale(count, 0, peak, inner_h), 1.5)
        kind = ("bar seconds-peak" if by_second else "bar peak") if count == peak else "bar"
        parts.append(
            f'<rect class="{kind}" x="{PAD + index * step:.1f}" y="{HEIGHT - PAD - height:.1f}" '
            f'width="{max(step - 0.5, 1):.1f}" height="{height:.1f}">'
            f"<title>{escape(label(start))} UTC: {count} runs</title></rect>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def outcomes_chart(hours: Sequence[Hour], *, span: str) -> Markup:
    """History entries per hour, stacked by outcome; each bar's title gives its counts and
    the hour's lateness p50/p99 (first attempts of scheduled occurrences)."""
    if not any(hour.total for hour in hours):
        return Markup(f'<p class="empty">No history in the last {escape(span)}.</p>')
    peak = max(hour.total for hour in hours)
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / len(hours)
    parts = [
        f'<svg class="outcomes" data-span="{escape(span)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="Outcomes per hour, last {escape(span)}; busiest hour: {peak}">',
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{HEIGHT - PAD}"/>',
        f'<text class="tick" x="{PAD - 6}" y="{PAD + 4}" text-anchor="end">{peak}</text>',
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 12}">{escape(_short(hours[0].start))}</text>',
        f'<text class="tick" x="{WIDTH - PAD}" y="{HEIGHT - 12}" text-anchor="end">'
        f"{escape(_short(hours[-1].start))}</text>",
    ]
    for index, hour in enumerate(hours):
        if not hour.total:
            continue
        x, base = PAD + index * step, float(HEIGHT - PAD)
        counts = ", ".join(f"{n} {s}" for s, n in sorted(hour.counts.items()))
        late = "" if hour.p50 is None else f"; lateness p50 {hour.p50:.2f}s, p99 {hour.p99:.2f}s"
        parts.append(f'<g class="hour"><title>{escape(_short(hour.start))} UTC: '
                     f"{escape(counts)}{late}</title>")  # fmt: skip
        for status, count in sorted(hour.counts.items()):
            height = max(_scale(count, 0, peak, inner_h), 1.0)
            base -= height
            parts.append(
                f'<rect class="{escape(status.lower())}" x="{x:.1f}" y="{base:.1f}" '
                f'width="{max(step - 0.5, 1):.1f}" height="{height:.1f}" '
                f'fill="{_COLOURS.get(status, "#555")}"/>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _short(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M")
