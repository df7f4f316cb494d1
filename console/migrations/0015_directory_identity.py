# Design §14: directory identities (the stable key of a directory user), the groups a directory
# sign-in saw in the role-change audit, and the append-only record of break-glass sign-ins.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# The break-glass sign-ins are an audit like the role changes: the same trigger function
# (migration 0005) refuses UPDATE and DELETE, and TRUNCATE of rows unless the test switch is on.
APPEND_ONLY_SQL = """
CREATE TRIGGER console_breakglasssignin_no_update_delete
    BEFORE UPDATE OR DELETE ON console_breakglasssignin
    FOR EACH ROW EXECUTE FUNCTION console_audit_append_only();
CREATE TRIGGER console_breakglasssignin_no_truncate
    BEFORE TRUNCATE ON console_breakglasssignin
    FOR EACH STATEMENT EXECUTE FUNCTION console_audit_append_only();
"""
DROP_APPEND_ONLY_SQL = """
DROP TRIGGER console_breakglasssignin_no_truncate ON console_breakglasssignin;
DROP TRIGGER console_breakglasssignin_no_update_delete ON console_breakglasssignin;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0014_chat_channels'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='rolechangeaudit',
            name='groups_seen',
            field=models.JSONField(blank=True, help_text='directory groups seen at the sign-in', null=True),
        ),
        migrations.AlterField(
            model_name='rolechangeaudit',
            name='via',
            field=models.CharField(help_text='admin, application, or the sign-in source: oidc or ldap', max_length=32),
        ),
        migrations.CreateModel(
            name='DirectoryIdentity',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('source', models.CharField(choices=[('oidc', 'Oidc'), ('ldap', 'Ldap')], max_length=8)),
                ('key', models.TextField(help_text='oidc: issuer and subject; ldap: objectGUID or DN (lower case)')),
                ('groups', models.JSONField(default=list, help_text='the groups seen at the last sign-in')),
                ('first_sign_in', models.DateTimeField(auto_now_add=True)),
                ('last_sign_in', models.DateTimeField()),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='directory_identity', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('source', 'key'), name='directory_identity_source_key')],
            },
        ),
        migrations.CreateModel(
            name='BreakGlassSignIn',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('user_id', models.BigIntegerField()),
                ('username', models.CharField(max_length=150)),
                ('address', models.CharField(blank=True, help_text='REMOTE_ADDR of the sign-in', max_length=64)),
            ],
            options={
                'ordering': ['-id'],
            },
        ),
        migrations.RunSQL(APPEND_ONLY_SQL, DROP_APPEND_ONLY_SQL),
    ]
