# MuJoCo's Python bindings are compiled (pybind11) and ship no type stubs: every name is Any to the checker.
from typing import Any

def __getattr__(name: str) -> Any: ...
