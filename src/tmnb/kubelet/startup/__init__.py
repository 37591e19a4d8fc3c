"""The kubelet's start-up up to its resource managers: mirrors cmd/kubelet/app/server.go and
pkg/kubelet/apis/config (defaults, validation) as far as they shape resource management (1.33–1.37).

``config`` (decode and defaults), ``validation`` (``VALIDATION``), ``run`` (``run()``'s steps,
``RUN``), ``allocatable`` (capacity and the Node Allocatable reservation), ``start``
(``start_settings``: all of them in the kubelet's order) and ``checks`` (``STAGES``: every check of
the start as a named step, for the settings validator). ``types`` holds what every check reads and
returns. The top of the model, with the node simulator it starts.
"""
