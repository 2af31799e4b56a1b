"""The support admin. ``admin`` registers the ModelAdmins (Django's autodiscovery imports this
package); ``pages`` holds the conversation's custom pages as methods of the mixin
``ConversationAdmin`` inherits; ``selectors`` and ``page_selectors`` every read; ``sections`` the
conversation page's rows; ``display`` how times, statuses and blocks are shown; ``filters`` and
``paginator`` the list helpers; ``compactions`` the compaction admin; ``tenants`` the tenant and
API key admins. Nothing outside the admin imports it."""

from timeline_app.admin import admin as admin
from timeline_app.admin import compactions as compactions
from timeline_app.admin import tenants as tenants
