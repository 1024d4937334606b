"""Model writers: the placed objects and the support become the package's files: the MJCF (``mjcf.py``, always), and
one module per further format registered in ``formats.py`` (URDF: ``urdf.py`` + ``urdf_objects.py``; USD: ``usd.py``);
OBJ meshes (``objio.py``) and the manifest ``export.json`` (``manifest.py``)."""
