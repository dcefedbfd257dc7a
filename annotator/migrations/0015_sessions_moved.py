"""Moves the sessions of Django's own table (``django_session``, read before sessions named their user) into
``annotator.Session``, so that an upgrade signs nobody out, and empties the old table: no session key is left
where nothing reads or expires it any more. Expired sessions are dropped, not moved."""
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations
from django.utils import timezone

BATCH = 1000


def user_of(session_data: str) -> int | None:
    """The signed-in user's id in a session's stored data; None for a session of nobody, or one that cannot be
    read (signed with another key, or altered), which then signs nobody in."""
    try:
        return int(SessionStore().decode(session_data)[SESSION_KEY])
    except (KeyError, TypeError, ValueError):
        return None


def move_sessions(old_model, new_model, user_model) -> int:
    """Copies the live sessions of ``old_model`` into ``new_model`` with their user, then empties ``old_model``.
    A session whose user no longer exists is moved as nobody's. Returns how many were moved."""
    live = old_model.objects.filter(expire_date__gt=timezone.now()).order_by("session_key")
    moved, after = 0, ""
    while rows := list(live.filter(session_key__gt=after)
                       .values_list("session_key", "session_data", "expire_date")[:BATCH]):
        users = {key: user_of(data) for key, data, _ in rows}
        known = set(user_model.objects.filter(pk__in={u for u in users.values() if u is not None})
                    .values_list("pk", flat=True))
        new_model.objects.bulk_create(
            [new_model(session_key=key, session_data=data, expire_date=expires,
                       user_id=users[key] if users[key] in known else None)
             for key, data, expires in rows],
            ignore_conflicts=True,
        )
        moved, after = moved + len(rows), rows[-1][0]
    old_model.objects.all().delete()
    return moved


def forwards(apps, schema_editor):
    move_sessions(apps.get_model("sessions", "Session"), apps.get_model("annotator", "Session"),
                  apps.get_model(*settings.AUTH_USER_MODEL.split(".")))


class Migration(migrations.Migration):

    dependencies = [
        ("annotator", "0014_session"),
        ("sessions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
