"""The conformance runner: the kubelet model asked the questions of the kubelet's own table tests, one
JSON case a line (the format: README.md's conformance section; cases in tests/conformance/).

``cases`` reads a case's input, ``kinds`` answers each kind (``HANDLERS``), ``runner`` reads the lines
and writes the answers. A room above ``tmnb.kubelet``, which it only calls: the published command
``python -m tmnb.kubelet.conformance`` is the one way back in (that module's ``main`` imports the
runner when it runs).
"""
