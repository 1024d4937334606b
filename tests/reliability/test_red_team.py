"""The red-team corpus (``red_team.CASES``, one case or more per class of the hostile-user run) through the real CLI:
each refusal is exactly one ``error:`` line on stderr naming the file or option and the problem, with the right exit
code; nothing is written in the case's folder or the temporary folder; every run stays under 60 s and 2 GiB of
address space beyond the preloaded interpreter (``cli_runner``); and the few odd-but-valid inputs succeed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.reliability.red_team import CASES, run_corpus


def test_every_case_class_is_covered() -> None:
    classes = Counter(c.id.split("_")[0] for c in CASES)
    assert len(CASES) >= 100 and len({c.id for c in CASES}) == len(CASES)
    for prefix in ("pcd", "scene", "validate", "calibrate", "log", "photos", "session", "markup", "disk"):
        assert classes[prefix] >= 1, prefix


def test_the_red_team_corpus_is_one_true_line_each(tmp_path: Path) -> None:
    problems, results = run_corpus(CASES, tmp_path, limit_s=60.0, memory_gb=2.0)
    assert not problems, "\n".join(problems)
    assert not any("internal error" in r["stderr"] or "Traceback" in r["stderr"] for r in results)
    assert max(r["seconds"] for r in results) < 60.0
    assert max(r["max_rss_mb"] for r in results) < 2048 + results[0]["parent_rss_mb"]
