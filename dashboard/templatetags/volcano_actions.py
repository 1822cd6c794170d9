"""Template hooks for the write actions: ``{% load volcano_actions %}``, then
``{% job_actions offered %}`` or ``{% queue_actions offered %}`` renders links to the confirmation
pages of ``offered``: the actions the view found the signed-in user may take
(``dashboard.actions.job_actions_for`` / ``queue_actions_for``; nothing when empty)."""

from django import template

register = template.Library()


@register.inclusion_tag("volcano_ui_prod/actions_list.html")
def job_actions(offered):
    return {"offered": offered or []}


@register.inclusion_tag("volcano_ui_prod/actions_list.html")
def queue_actions(offered):
    return {"offered": offered or []}
