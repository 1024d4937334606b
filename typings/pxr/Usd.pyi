# usd-core ships no type stubs for this compiled module: every name is Any to the checker.
from typing import Any

def __getattr__(name: str) -> Any: ...
