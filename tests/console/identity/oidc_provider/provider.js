// A real OpenID provider for the console's sign-in tests: panva's oidc-provider (OpenID-certified),
// on 127.0.0.1 over plain http. Started by tests/console/identity/oidc_support.py:
//   node provider.js <port> <config.json>
// config.json: {"issuer": ..., "clients": [...], "accounts": {login: {claims}}, "short_lived": [client ids]}
// The login form is the provider's own development form (devInteractions): the login name picks
// the account, any password is taken. Prints "listening" when it serves.
import fs from 'node:fs';
import Provider from 'oidc-provider';

const [port, configPath] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const shortLived = new Set(config.short_lived || []);

const provider = new Provider(config.issuer, {
  clients: config.clients,
  cookies: { keys: ['tidy-test-cookie-key-not-secret'] },
  conformIdTokenClaims: false,
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username', 'groups'],
    email: ['email'],
  },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      // The provider's own pages import a web font; these serve no request off this machine.
      logoutSource: async (ctx, form) => {
        ctx.body = `<!DOCTYPE html><html><head><title>Sign out</title></head><body>${form}
          <button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
          </body></html>`;
      },
    },
  },
  pkce: { required: () => true },
  ttl: {
    // A client listed in short_lived gets ID tokens that expire after one second (the expiry test).
    IdToken: (ctx, token, client) => (shortLived.has(client.clientId) ? 1 : 600),
  },
  async findAccount(ctx, id) {
    const account = config.accounts[id];
    if (!account) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...account }) };
  },
});
provider.proxy = false;
const server = provider.listen(Number(port), '127.0.0.1', () => {
  console.log('listening');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
