"""System checks: acknowledgements (migration console 0003_notifications's triggers) and silences
with their endings (0012_notification_silences's) stay append-only. ConsoleConfig.ready()
registers them."""

from console.checks import append_only_check

check_acknowledgements_are_append_only = append_only_check(
    subject="Notification acknowledgements", table="console_notificationacknowledgement",
    migration="0003_notifications", error_id="console.E110", inspect_error_id="console.E111")

check_silences_are_append_only = append_only_check(
    subject="Silences", table="console_silence",
    migration="0012_notification_silences", error_id="console.E130", inspect_error_id="console.E131")

check_silence_endings_are_append_only = append_only_check(
    subject="Silence endings", table="console_silenceending",
    migration="0012_notification_silences", error_id="console.E132", inspect_error_id="console.E133")


def check_chat_channels(app_configs=None, **kwargs):
    """NOTIFY_CHANNELS_FILE is read and checked when the settings load (console.notifications.
    channels.config); what it cannot know there, the events registry, is checked here: a channel
    that names an event the console does not have stops start-up, naming the channel and the field."""
    from django.conf import settings
    from django.core.checks import Error, Warning

    from console.notifications.events import EVENTS

    errors = []
    if settings.NOTIFY_CHANNELS_FILE and not settings.NOTIFY_CHANNELS:
        errors.append(Warning(f"NOTIFY_CHANNELS_FILE {settings.NOTIFY_CHANNELS_FILE} lists no [[channel]]: no chat "
                              "channel gets notifications", id="console.W141"))
    for channel in settings.NOTIFY_CHANNELS:
        for event in channel.events:
            if event not in EVENTS:
                errors.append(Error(
                    f"NOTIFY_CHANNELS_FILE: channel {channel.name!r}, field 'events': {event!r} is not an event "
                    f"(known: {', '.join(EVENTS)})", id="console.E140"))
    return errors
