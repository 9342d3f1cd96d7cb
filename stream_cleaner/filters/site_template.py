"""``site_template``: a block that repeats on most of its site's recent pages (`sites`)."""

from .base import Level, PassRule


class SiteTemplate(PassRule):
    """Every sentence of a block that `sites.SiteTemplates` calls the site's template (the
    worker's ``site_templates``, `clean_document`'s ``sites``). Overrides the sentence rules."""

    reason = "site_template"
    level = Level.BLOCK
    step = "site_template"
