"""Notification pages, included at /notifications/."""

from django.urls import path

from console.notifications import views

urlpatterns = [
    path("", views.notifications, name="notifications"),
    path("<int:pk>/acknowledge", views.acknowledge, name="notification-acknowledge"),
    path("thresholds/", views.thresholds, name="notification-thresholds"),
    path("silences/", views.silences, name="notification-silences"),
    path("silences/<int:pk>/end", views.silence_end, name="notification-silence-end"),
    path("channels/", views.channels, name="notification-channels"),
    path("channels/<str:name>/test", views.channel_test, name="notification-channel-test"),
]
