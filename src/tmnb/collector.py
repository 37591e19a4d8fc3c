"""The interpreter's cyclic garbage collector, as tmnb sets it: the one module that touches ``gc``.

A fleet's snapshot is millions of objects that live as long as the process. Python's collector walks
every tracked object at each full collection and a young generation of 700 objects fills thousands of
times while a fleet is built or replayed; left as it is, the collector takes up to half of a load or
a report at 5,000 nodes. Three moments call for three settings, and each is one function here:
``paused`` while a tree that lives on is built, ``settled`` once a kernel holds what it keeps,
``frozen`` around a pool of forked workers.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: The young generation a settled process collects at (Python's default is 700): a report's cells
#: allocate millions of objects, and each collection of the young generation is cheap only when rare.
SETTLED_THRESHOLD = (50_000, 20, 20)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off while a tree is built or written whose every object lives on (a snapshot's
    load or save): the collections its allocations set off would walk the whole growing heap. Back on
    afterwards, if it was on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def settled() -> None:
    """What the process holds now (its modules, a fleet's snapshot) frozen out of the collector's
    sight for good, and a larger young generation: a report's kernel calls it once its snapshot is
    read (at 5,000 nodes, full collections took 3.5 s of 03's 12 s in its kernel)."""
    gc.freeze()
    gc.set_threshold(*SETTLED_THRESHOLD)


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """The objects held now frozen while forked workers run: a worker's collections would walk them
    all and copy every page they touch. A process that had frozen its objects before (``settled``)
    keeps them frozen after."""
    before = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not before:
            gc.unfreeze()
