"""View models for the pages: the domain's facts (``dashboard.volcano``) as display values.

One topic per module, imported from that module: ``phases`` (badges: label, tone, icon),
``jobs`` (gang bars, task rows, policies, timeline, list hints), ``podgroups`` (gang bar,
conditions, owner), ``queues`` (tree rows, the gang's room as rows), ``pods`` (pod rows, exit
text), ``resources`` (quantities in words, resource bars), ``pending`` (why-pending facts in
words, "cannot be read" hints), ``selectors`` (label selectors of the list filters),
``versions`` (fragment version keys), ``clock`` (the pages' "now").

The facts themselves are read from ``dashboard.volcano``, never through this package.
"""
