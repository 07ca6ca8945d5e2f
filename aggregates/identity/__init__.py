"""Identity: projects, roles, tokens, Keystone-style logins and the identity API."""
