"""The progress helper: on when asked, off when told, by default only on a terminal; counts releases."""

import io

from dpaudit._progress import progress_bar, progress_wanted


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_default_follows_the_terminal(monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    assert progress_wanted(None, io.StringIO()) is False
    assert progress_wanted(None, _Tty()) is True
    monkeypatch.setenv("DPAUDIT_PROGRESS", "1")
    assert progress_wanted(None, io.StringIO()) is True
    monkeypatch.setenv("DPAUDIT_PROGRESS", "0")
    assert progress_wanted(None, _Tty()) is False
    assert progress_wanted(True, io.StringIO()) is True


def test_enabled_bar_shows_releases_and_time_left():
    out = io.StringIO()
    with progress_bar(total=2_000_000, desc="calibration", enabled=True, file=out) as bar:
        bar.update(500_000)
        bar.set_description("held-out counts")
        bar.set_total(4_000_000)
        bar.update(1_000_000)
    text = out.getvalue()
    assert "releases" in text and " left" in text and "4.00M" in text and "held-out counts" in text
    assert bar.n == 1_500_000 and bar.total == 4_000_000


def test_disabled_bar_writes_nothing():
    out = io.StringIO()
    with progress_bar(total=10, enabled=False, file=out) as bar:
        bar.update(10)
        bar.set_total(20)
    assert out.getvalue() == "" and bar.n == 10 and not bar.enabled


def _per_call(dataset, rng=None):
    return float(sum(dataset)) + rng.laplace(0.0, 1.0)


def test_the_audit_bar_follows_dpaudit_progress(monkeypatch):
    """DPAUDIT_PROGRESS=1 draws the audit's bar when stderr is a log, =0 keeps a terminal quiet; the audit
    followed the terminal alone, so with the variable set and stderr a file it showed neither bar nor lines."""
    import sys

    import dpaudit

    for env, stream, drawn in (("1", io.StringIO(), True), ("0", _Tty(), False)):
        monkeypatch.setenv("DPAUDIT_PROGRESS", env)
        monkeypatch.setattr(sys, "stderr", stream)
        dpaudit.audit(_per_call, [1.0], [0.0], epsilon=1.0, samples=200, seed=1, ideal=True)
        assert ("chunk" in stream.getvalue()) is drawn, (env, stream.getvalue())


def test_search_and_the_trial_bar_follow_dpaudit_progress(monkeypatch):
    """The search's lines and ``dpaudit run``'s trial bar asked the terminal alone, beside the audit's bar."""
    import sys

    import dpaudit.pair_search as ps
    from dpaudit.runner.execution import _progress

    monkeypatch.setattr(ps, "PROGRESS_EVERY", 0.0)
    for env, stream, drawn in (("1", io.StringIO(), True), ("0", _Tty(), False)):
        monkeypatch.setenv("DPAUDIT_PROGRESS", env)
        monkeypatch.setattr(sys, "stderr", stream)
        ps.search("noisy_histogram", epsilon=1.0, size=2, low=0, high=1, integer=True, relation="add-remove",
                  samples=2000, seed=1, ideal=True)
        assert ("search: " in stream.getvalue()) is drawn, (env, stream.getvalue())
        assert _progress(3, 0, None).disable is not drawn


def test_lines_mode_writes_a_line_per_interval_once_the_work_is_long(monkeypatch):
    # A fixed-size audit into a log said nothing until it ended (10,000 Opacus runs per side: ten minutes).
    import dpaudit._executor as ex

    clock = iter(float(t) for t in (0, 5, 11, 20, 45, 46))  # start, then one reading per result
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    out = io.StringIO()
    assert ex._collect_with_lines(iter(range(5)), 6, "audit", "chunk", file=out) == [0, 1, 2, 3, 4]
    lines = out.getvalue().splitlines()
    # 5 s: quiet; 11 s: the first line; 20 s: within 30 s of it; 45 s: the next.
    assert lines == ["progress: audit: 2 of 6 chunks done, 11 s, about 22 s left",
                     "progress: audit: 4 of 6 chunks done, 45 s, about 22 s left"]


def test_a_fixed_size_command_into_a_log_asks_for_lines(monkeypatch):
    from dpaudit import cli

    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    parser = cli._build_parser()
    args = parser.parse_args(["audit", "laplace", "--epsilon", "1", "--samples", "1000"])
    kw = cli._audit_inputs(args)[3]
    assert kw["progress"] == "lines" and "on_round" not in kw
    args = parser.parse_args(["audit", "laplace", "--epsilon", "1"])
    kw = cli._audit_inputs(args)[3]
    # A sequential audit: a line per round, and lines within a long round (its last is half the audit).
    assert kw["progress"] == "lines" and "on_round" in kw
    args = parser.parse_args(["audit", "laplace", "--epsilon", "1", "--samples", "1000", "--no-progress"])
    assert cli._audit_inputs(args)[3]["progress"] is False
