"""The one exception family users see. Messages name the file (or element) and say what to do."""

from __future__ import annotations

from pathlib import Path


class Real2SimError(Exception):
    """Base of every error real2sim reports to a user. The CLI prints it as one line and exits 1."""


class InputError(Real2SimError):
    """An input file or folder is missing, unreadable or malformed."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str]]:
        return (
            type(self),
            (self.path, self.problem),
        )  # pickles whole, so it comes back from a worker process


class ConfigError(Real2SimError):
    """An option or configuration value is invalid."""


class OptionError(ConfigError):
    """A command-line option's value is invalid: a usage error (CLI exit code 2); the message names the option."""


class StageError(Real2SimError):
    """A stage ran but could not produce a trustworthy result (e.g. no support plane, a failing package)."""


class NotBuiltError(Real2SimError):
    """A command or route that this version does not provide yet (CLI exit code 2)."""


class Terminated(KeyboardInterrupt):  # noqa: N818 - a signal, as KeyboardInterrupt
    """SIGTERM arrived: the run stops like on Ctrl-C (partial output removed), and the CLI exits 143."""
