"""The support admin: ModelAdmins (``admin``), their custom pages (``pages``) and the reads they
need (``selectors``). Django's autodiscovery imports this package; the registrations live in
``admin.py``."""

from timeline_app.admin import admin as admin
