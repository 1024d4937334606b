"""Object segmentation on a support: the points above a fitted support plane enter, one label per object
leaves. Euclidean clusters (``segment``) are split into locally convex patches (``convexity``), joined across
occluders (``occlusion``) and along support relations (``stacking``), with point-level boundary refinement
(``refine``); ``candidates`` collects the points that may belong to objects."""
