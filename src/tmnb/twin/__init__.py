"""The rehearsal twin: everything that stands in for a real fleet so the product can be tried,
rehearsed and tested without one. ``sample`` generates the embedded sample fleet (committed as
package data, read by ``tmnb.sources.embedded``); ``sandbox`` serves a simulated cluster on 127.0.0.1
whose kubelets admit with ``tmnb.kubelet``; ``metrics`` draws the rehearsal's application metrics;
``synthetic`` draws workloads with known shifts for the statistics' calibration; ``demo`` runs the
whole pipeline on the twin. A production run goes through none of it."""
