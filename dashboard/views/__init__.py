"""The dashboard's pages: plain function views over one cluster-cache snapshot per request.

Each view (1) takes a snapshot restricted to the namespaces the request may see
(``rows.snapshot``), (2) names its refreshable fragments and how to compute each one's version
(``fragments.Fragments``), (3) answers 204 when an htmx poll already has that version (nothing is
rendered), else (4) builds a ``ctx`` dict with only what the response shows and renders either the
whole page or the one ``{% partialdef %}`` fragment asked for (``page.html#name``): the first
render and the refresh use the same markup.

One module per page family (``overview``, ``jobs``, ``podgroups``, ``queues``, ``pods``,
``kiosk``, ``prefs``, ``errors``); shared parts: ``fragments`` (the ``f``/``v`` protocol),
``notices`` (the status bar), ``listing`` (the list pages), ``memo`` (the memos), ``rows`` and
``queue_summary`` (rows several pages show).
"""
