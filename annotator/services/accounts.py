"""Account state beyond Django's user: the first-run accounts must choose their own password before anything
else (config.middleware and config.authentication hold them to it)."""
from __future__ import annotations

from annotator.models import Account


def require_password_change(*, user) -> None:
    """``user`` must change the password they were given before using the site or the API."""
    Account.objects.update_or_create(user=user, defaults={"must_change_password": True})


def password_changed(*, user) -> None:
    """``user`` chose a password of their own."""
    Account.objects.filter(user=user, must_change_password=True).update(must_change_password=False)


def must_change_password(user) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    account = user._meta.get_field("deidloop_account")
    if account.is_cached(user):  # loaded with the user (config.authentication.AccountModelBackend)
        loaded = account.get_cached_value(user)
        return loaded is not None and loaded.must_change_password
    return Account.objects.filter(user=user, must_change_password=True).exists()
