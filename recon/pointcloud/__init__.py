"""Scans to a scene: point-cloud files (``io``) are read, registered into one frame (``register``), thinned
(``voxel``), levelled on their support plane (``support``, ``viewpoint``) and turned into a ``Scene``
(``scene.points_to_scene``: segmentation, then one watertight mesh per object). ``run.run_recon_pointcloud`` is
the stage entry point: files and a ``config.PointCloudReconCfg`` in, a scene folder out."""
