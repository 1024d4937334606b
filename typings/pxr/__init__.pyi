# usd-core's pxr modules are compiled (boost.python) and ship no type stubs: each module's names are Any.
