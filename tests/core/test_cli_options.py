"""Options generated from config dataclasses: names, types, defaults and help come from the fields."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.cli.options import Opt, build, first_sentence, options


@dataclass(frozen=True)
class _Cfg:
    out_dir: Path | None = None
    """Where it goes; None: nowhere. A second sentence."""
    count: int = 3
    """How many, e.g. 3 (the default)."""
    ratio: float | None = None
    """A ratio."""
    mode: Literal["fast", "slow"] = "fast"
    """Speed."""
    formats: tuple[str, ...] = ("a", "b")
    """Comma list."""
    logs: tuple[Path, ...] = ()
    """Repeatable."""
    cache: bool = True
    """Reuse results."""
    weights: tuple[float, ...] = (1.0, 2.0)
    """Numbers."""


@click.command()
@options(_Cfg, "out_dir", "count", "ratio", "mode", "formats", "logs", "cache", "weights",
         out_dir=Opt(("-o", "--out"), required=True), logs=Opt(("--log",), multiple=True))  # fmt: skip
def _cmd(**params: Any) -> None:
    click.echo(repr(build(_Cfg, params)))


def test_generated_options_parse_into_the_config() -> None:
    r = CliRunner().invoke(_cmd, ["-o", "x"])
    assert r.exit_code == 0, r.output
    assert r.output.strip() == repr(_Cfg(out_dir=Path("x")))
    args = ["--out", "y", "--count", "5", "--ratio", "0.5", "--mode", "slow", "--formats", "c, d", "--log", "l1",
            "--log", "l2", "--no-cache", "--weights", "3,0.5"]  # fmt: skip
    r = CliRunner().invoke(_cmd, args)
    assert r.exit_code == 0, r.output
    want = _Cfg(Path("y"), 5, 0.5, "slow", ("c", "d"), (Path("l1"), Path("l2")), False, (3.0, 0.5))
    assert r.output.strip() == repr(want)


def test_bad_values_are_usage_errors() -> None:
    assert CliRunner().invoke(_cmd, []).exit_code == 2  # -o is required
    assert CliRunner().invoke(_cmd, ["-o", "x", "--mode", "medium"]).exit_code == 2
    assert CliRunner().invoke(_cmd, ["-o", "x", "--count", "many"]).exit_code == 2
    assert CliRunner().invoke(_cmd, ["-o", "x", "--weights", "1,x"]).exit_code == 2


def test_help_shows_first_sentence_and_dataclass_default() -> None:
    out = CliRunner().invoke(_cmd, ["--help"], terminal_width=200).output
    assert (
        "Where it goes.  [required]" in out and "second sentence" not in out
    )  # a required option has no None
    assert "How many, e.g. 3 (the default).  [default: 3]" in out
    assert "[default: a,b]" in out and "--cache / --no-cache" in out and "[fast|slow]" in out


def test_first_sentence() -> None:
    assert first_sentence("Side [m] of it.\n    More ``text``.") == "Side [m] of it."
    assert first_sentence("Use ``x``, e.g. joint:*.damping. Next") == "Use x, e.g. joint:*.damping."
    assert first_sentence("Samples (seeded). 1000 resolve it.") == "Samples (seeded)."
    assert first_sentence("How many, e.g. 3 (the default).") == "How many, e.g. 3 (the default)."


def test_cli_keeps_its_flag_spellings() -> None:
    want = {
        ("export",): ["-o", "--out", "--format", "--max-hulls", "--no-cache", "--workers", "--name"],
        ("recon", "pointcloud"): [
            "--units",
            "--poses",
            "--object-only",
            "--save-point-labels",
            "--no-symmetry",
        ],
        ("recon", "photos"): [
            "--marker-size",
            "--marker-dict",
            "--known-distance",
            "--intrinsics",
            "--dense",
        ],
        ("recon", "splat"): ["--scale", "--object-only"],
        ("calibrate",): ["--log", "--map", "--fit", "--holdout", "--window", "--smooth-qvel", "--no-report"],
        ("process",): ["--output", "--stages", "--ray", "--force"],
        ("demo",): ["--out", "--sample", "--workers"],
    }
    for cmd, flags in want.items():
        out = CliRunner().invoke(cli, [*cmd, "--help"], terminal_width=200).output
        assert all(f in out for f in flags), (cmd, out)


def test_calibrate_help_groups_every_option_by_what_it_is_for():
    """``calibrate --help`` lists its options under headings (logs and maps, what to fit, the method, robots'
    actuators, free bodies, outputs), each option under exactly one; only --help is left over."""
    from real2sim.cli.calibrate import SECTIONS, command

    out = CliRunner().invoke(cli, ["calibrate", "--help"], terminal_width=200).output
    headings = [h for h, _ in SECTIONS]
    at = [out.index(f"\n{h}:\n") for h in headings]
    assert at == sorted(at), out
    named = [n for _, names in SECTIONS for n in names]
    assert len(named) == len(set(named))
    options = {p.name for p in command.params if isinstance(p, click.Option)}
    assert options == set(named), options ^ set(named)
    for i, (h, names) in enumerate(SECTIONS):  # each option's flag appears under its own heading
        block = out[at[i] : at[i + 1] if i + 1 < len(at) else len(out)]
        for n in names:
            flag = next(p for p in command.params if p.name == n).opts[-1]
            assert flag in block, (h, flag)
