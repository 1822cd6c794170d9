"""Template hooks for the write actions: ``{% load volcano_actions %}``, then
``{% job_actions job %}`` or ``{% queue_actions queue %}`` renders links to the confirmation pages
of the actions the signed-in user may take (nothing when actions are off or not permitted)."""

from django import template

from dashboard.actions import job_actions_for, queue_actions_for

register = template.Library()


@register.inclusion_tag("volcano_ui_prod/actions_list.html", takes_context=True)
def job_actions(context, job):
    request = context.get("request")
    return {"offered": job_actions_for(request, job) if request is not None and job else []}


@register.inclusion_tag("volcano_ui_prod/actions_list.html", takes_context=True)
def queue_actions(context, queue):
    request = context.get("request")
    return {"offered": queue_actions_for(request, queue) if request is not None and queue else []}
