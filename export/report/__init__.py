"""The look of a package: PNG renders of each object's visual and collision geometry (``render.py``), the package's
``README.md`` and ``report.html`` (``pages.py``) and the lines on how to load it in each engine (``loading.py``)."""
