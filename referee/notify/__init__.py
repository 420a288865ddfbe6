"""Notifications (``docs/notifications.md``): what the log means for whom (``events``, pure), the armored
blocks of play by e-mail (``armor``, pure), mail texts (``render``, pure), contacts, mail out, and the
gateway; the delivery jobs are in ``workers/deliveries.py`` and ``workers/mailjobs.py``."""
