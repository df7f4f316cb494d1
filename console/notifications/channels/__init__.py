"""Chat channels (design §15): notifications to WeCom, DingTalk, Feishu, Slack, Teams and plain
webhooks, configured in NOTIFY_CHANNELS_FILE (config.py).

One small client module per vendor (wecom.py, dingtalk.py, feishu.py, slack.py, teams.py,
webhook.py: the body, the signature, the success rule, the size limit, the rate limits; see
base.py) behind one delivery interface, send.py: console.notifications.delivery hands it each
outbox row of channel `chat`, and it renders the message in the channel's language, waits for
the channel's rate limit (decided in the database, across every qcluster process), posts it
through the journaled `http_request` and reads the vendor's answer.
"""
