"""Collision geometry within an engine budget: one exact hull for a convex mesh whose hull fits the budget, else a
primitive where one fits and is at least as close to the surface as the one hull, else CoACD convex hulls.

The watertight mesh is decimated before decomposing (CoACD's time grows with faces); CoACD merges down to
``max_hulls``, each hull is reduced to ``max_hull_vertices`` keeping the surface error small (``limit_points``), and
the budget CoACD leaves unused is spent splitting the hulls that bulge farthest past the surface (``refine``), and
each hull takes in the full-resolution vertices that decimation cut off from its patch (``cover_surface``).
Results are cached by mesh content + options + the code that shapes them (``cache``).

Modules: ``shape`` (the ``Collision`` value), ``geometry`` (which geometry an object gets), ``primitives``, ``hulls``
(Qhull helpers), ``coacd`` (CoACD and the steps after it), ``refine`` (splits and merges), ``cover`` (decimation
undone), ``cache``.
"""
