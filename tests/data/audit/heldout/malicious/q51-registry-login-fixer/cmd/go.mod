module example.invalid/registry-login-fixer

go 1.22
