"""Generated data shipped with placelint (package marker for importlib.resources).

``opdb.json.gz`` is written by ``tools/gen_opdb.py`` from TensorFlow's own op and
kernel registries; read it through ``placelint.opdb``, never by hand.
"""
