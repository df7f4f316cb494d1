
import django.db.models.functions.datetime
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('recovery', '0008_cordons'),
    ]

    operations = [
        migrations.CreateModel(
            name='ProcessHeartbeat',
            fields=[
                ('worker', models.CharField(help_text='host:pid of the worker process', max_length=200, primary_key=True, serialize=False)),
                ('cluster', models.CharField(help_text='host:cluster-<pid of the qcluster>', max_length=200)),
                ('host', models.CharField(max_length=200)),
                ('cluster_pid', models.IntegerField()),
                ('started_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('last_seen_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('shards', models.JSONField(default=list, help_text='the shards it held when last seen')),
                ('shard_count', models.IntegerField(db_default=1, default=1)),
            ],
            options={
                'indexes': [models.Index(fields=['-last_seen_at'], name='recovery_heartbeat_seen_idx')],
            },
        ),
    ]
