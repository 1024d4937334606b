"""Trained Gaussian splats to a scene: a 3DGS / nerfstudio PLY enters (read by ``io.splat``); floaters and
hidden Gaussians are removed (``clean``), the splat becomes a solid (``solid``) scored against its Gaussians
(``score``), and ``run.run_recon_splat`` writes the ``Scene``."""
