"""Notifications: what the log means for whom (``events``, pure). Sending (webhooks, mail) comes later."""
