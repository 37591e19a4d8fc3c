"""How snapshots are made: a live cluster, node files, saved snapshots, and the embedded sample fleet."""
