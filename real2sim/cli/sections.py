"""``SectionedCommand``: a click command whose ``--help`` lists its options under headings by what they are for,
instead of one flat list (options named in no section come last, under "Other options")."""

from __future__ import annotations

from typing import Any

import click


class SectionedCommand(click.Command):
    """``sections``: (heading, option parameter names) pairs, in the order the help shows them."""

    def __init__(self, *args: Any, sections: tuple[tuple[str, tuple[str, ...]], ...] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.sections = sections

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = {
            p.name: r
            for p in self.get_params(ctx)
            if isinstance(p, click.Option) and (r := p.get_help_record(ctx)) is not None
        }
        listed: set[str | None] = set()
        for heading, names in self.sections:
            rows = [records[n] for n in names if n in records]
            listed |= set(names)
            if rows:
                with formatter.section(heading):
                    formatter.write_dl(rows)
        rest = [r for n, r in records.items() if n not in listed]
        if rest:
            with formatter.section("Other options"):
                formatter.write_dl(rest)
