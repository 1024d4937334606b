# scipy.spatial takes cKDTree from its compiled _ckdtree module, for which scipy ships no stub (its own source
# marks that import `type: ignore`). This stub re-exports scipy.spatial as its __init__ does, so ConvexHull, KDTree,
# QhullError and the rest keep scipy's types, and declares cKDTree with every attribute Any.
# ruff: noqa: F403  (the star imports are scipy.spatial's own, as in its __init__.py)
from typing import Any

from scipy.spatial._geometric_slerp import geometric_slerp as geometric_slerp
from scipy.spatial._kdtree import *
from scipy.spatial._plotutils import *
from scipy.spatial._procrustes import procrustes as procrustes
from scipy.spatial._qhull import *
from scipy.spatial._spherical_voronoi import SphericalVoronoi as SphericalVoronoi

class cKDTree:
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

def __getattr__(name: str) -> Any: ...
