"""The Volcano domain: what the fields of Volcano and Kubernetes objects mean, as pure functions.

Every function takes the plain JSON dicts the cluster cache holds and never assumes a field is
present or well-typed (missing status, unknown phase strings, null timestamps, garbage quantities
all have a defined reading). Nothing here renders, translates, touches Django or does I/O: the
presenters turn these facts into words.

Modules, each the one place of its facts:

- ``objects``: field accessors (metadata, spec, status, owner) and the counter reader ``count``;
- ``time``: the RFC 3339 timestamp reader and intervals;
- ``quantities``: Kubernetes quantities, their formatting and resource names;
- ``phases``: Job, PodGroup, Queue and pod phase tables and their classes;
- ``jobs``: Job spec fields read with Volcano's defaults (maxRetry, ttlSecondsAfterFinished);
- ``gang``: gang readiness and a gang's size and minimum resources;
- ``pods``: kubectl's pod STATUS/READY/RESTARTS columns and pod problems;
- ``queues``: the queue hierarchy and the room a gang has under its capabilities;
- ``events``: event identity, times, counts and de-duplication;
- ``pending``: why a Job or PodGroup does not run (the facts; presenters word them).
"""
