"""The fault run's verdict (bench/faults.py judge): what counts as shed, wrongly 404 or a failed probe."""

from __future__ import annotations

from bench.faults import Answer, Probe, judge

PHASES = [("stall", 0.0, 10.0), ("saturation", 10.0, 20.0)]
CONVERGED = (True, 1.0, {1: "identical"})
JOB = ("team-a", "job-1", "uid-1")


def _answer(
    at: float, status: int, *, shed: bool = False, gone: bool = False, wrong: bool | None = None
) -> Answer:
    return Answer(at, status, "page", 5.0, gone, shed, False, JOB, wrong)


def _run(answers: list[Answer], probes: list[Probe] | None = None) -> tuple[list[str], bool]:
    timeline = [(a.at, a.status, "", a.ms) for a in answers]
    healthy = [Probe(t + 0.5, True, 3.0, "") for t in range(20)]
    return judge(
        PHASES, timeline, answers, healthy if probes is None else probes, {}, "saturation", CONVERGED
    )


def test_a_clean_run_passes():
    assert _run([_answer(1, 200), _answer(11, 200)])[1]


def test_retry_after_503_is_shed_only_during_saturation():
    assert _run([_answer(11, 503, shed=True)])[1]
    assert not _run([_answer(1, 503, shed=True)])[1]
    assert not _run([_answer(11, 503, shed=False)])[1]


def test_a_404_for_an_existing_job_fails_and_one_for_a_deleted_job_does_not():
    lines, passed = _run([_answer(1, 404, gone=True, wrong=True)])
    assert not passed and "| stall | 10 | 1 | 404: 1 | 0 | 0 | 1 |" in lines[0]
    assert _run([_answer(1, 404, gone=True, wrong=False)])[1]
    assert not _run([_answer(1, 404, gone=True, wrong=None)])[1]  # never checked: not known right


def test_one_failed_probe_fails():
    probes = [Probe(t + 0.5, t != 3, 3.0, "" if t != 3 else "TimeoutError") for t in range(20)]
    lines, passed = _run([_answer(1, 200)], probes)
    assert not passed and "1 / 10" in lines[0]
