"""Photos to a scene: an image folder enters; SfM cameras (``features``, ``sfm``), metric scale (``marker``),
similarity alignment (``align``), dense points (``mvs``, ``stereo``) and colours (``colour``) lead to the same
``Scene`` as a scan. ``run.run_recon_photos`` is the stage entry point; ``nerfstudio`` writes a nerfstudio
dataset from the cameras."""
