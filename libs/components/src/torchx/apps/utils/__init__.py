"""``booth_main``, ``copy_main`` and ``process_monitor``: see each module."""
