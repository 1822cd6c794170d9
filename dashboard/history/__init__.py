"""History of queues, Jobs and pods, recorded from the cache's watch stream (docs/history.md).

``models``: the tables; ``recorder``: the thread that writes them in batches; ``lease``: one
writer among replicas; ``reads``: the queries pages ask (each failure degrades to a notice);
``service``: the process-wide HistoryService that ties them to the cluster cache.
"""
