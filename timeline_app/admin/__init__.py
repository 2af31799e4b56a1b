"""The support admin: the ModelAdmins and their custom pages. Its modules: docs/admin.md "Code"."""

from timeline_app.admin import admin as admin
from timeline_app.admin import compactions as compactions
from timeline_app.admin import tenants as tenants
